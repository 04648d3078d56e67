#!/bin/bash
# A hand-written Megatron-LM launch script in the layout of Megatron-LM's examples/ scripts
# (variables, bash arrays, line continuations): Llama 3 70B on 8 nodes of 8 H100.
set -euo pipefail

export CUDA_DEVICE_MAX_CONNECTIONS=1
GPUS_PER_NODE=8
NUM_NODES=8
TP=8
PP=4
MASTER_ADDR=${MASTER_ADDR:-localhost}

DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
    --master_addr $MASTER_ADDR
    --master_port 6000
)

MODEL_ARGS=(
    --num-layers 80
    --hidden-size 8192
    --ffn-hidden-size 28672
    --num-attention-heads 64
    --group-query-attention --num-query-groups 8   # GQA
    --seq-length 8192
    --max-position-embeddings 8192
    --swiglu --normalization RMSNorm --position-embedding-type rope
    --untie-embeddings-and-output-weights --disable-bias-linear
)

TRAINING_ARGS=(
    --micro-batch-size 1
    --global-batch-size 128
    --train-iters 500000
    --lr "1.5e-4" --min-lr 1.5e-5 --lr-decay-style cosine
    --bf16
    --recompute-granularity selective
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather
)

PARALLEL_ARGS=(
    --tensor-model-parallel-size ${TP}
    --pipeline-model-parallel-size ${PP}
    --num-layers-per-virtual-pipeline-stage 4
    --sequence-parallel
)

DATA_ARGS=(
    --data-path /data/llama3_text_document
    --tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Meta-Llama-3-70B
)

torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${MODEL_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    ${PARALLEL_ARGS[@]} \
    ${DATA_ARGS[@]}
