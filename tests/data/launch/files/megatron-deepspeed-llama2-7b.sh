#!/bin/bash
# A hand-written Megatron-DeepSpeed launch script in the layout of its examples_deepspeed/
# scripts: Llama 2 7B, ZeRO-1, TP 2 on 2 nodes of 8, with ds_config.json beside it.
DS_CONFIG=ds_config.json
TP=2
deepspeed --num_nodes 2 --num_gpus 8 pretrain_gpt.py \
       --tensor-model-parallel-size $TP \
       --no-pipeline-parallel \
       --num-layers 32 --hidden-size 4096 --ffn-hidden-size 11008 \
       --num-attention-heads 32 \
       --micro-batch-size 2 --global-batch-size 256 \
       --seq-length 4096 --max-position-embeddings 4096 \
       --tokenizer-type GPTSentencePieceTokenizer --tokenizer-model /data/tokenizer.model \
       --swiglu --normalization rmsnorm --use-rotary-position-embeddings --disable-bias-linear \
       --untie-embeddings-and-output-weights \
       --use-flash-attn-v2 --bf16 --recompute-granularity selective \
       --zero-stage 1 \
       --deepspeed --deepspeed_config $DS_CONFIG
