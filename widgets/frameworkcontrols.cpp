// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/frameworkcontrols.h"
#include "core/framework_options.h"
#include "widgets/qt_text.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QMenu>
#include <QSignalBlocker>
#include <QToolButton>

#include <algorithm>
#include <array>
#include <map>

namespace paralens {
namespace {

constexpr std::array kFrameworks{Framework::Megatron, Framework::DeepSpeed, Framework::FSDP};
constexpr std::array kFp8Recipes{Fp8Recipe::Default, Fp8Recipe::Delayed,     Fp8Recipe::Tensorwise,
                                 Fp8Recipe::Rowwise, Fp8Recipe::RowwiseGwHp, Fp8Recipe::Mxfp8};
constexpr std::array kPrefetches{FsdpBackwardPrefetch::Default, FsdpBackwardPrefetch::Pre,
                                 FsdpBackwardPrefetch::Post, FsdpBackwardPrefetch::None};
constexpr std::array kGradDtypes{GradReduceDtype::Default, GradReduceDtype::Fp32,
                                 GradReduceDtype::Bf16};
constexpr std::array kMoments{AdamMomentsDtype::Fp32, AdamMomentsDtype::Bf16};
constexpr std::array kReshards{ReshardAfterForward::Default, ReshardAfterForward::Always,
                               ReshardAfterForward::Never};
// The attention choices: a flash kernel (the framework's or a named one), or none.
constexpr std::array kKernels{AttentionKernel::Default, AttentionKernel::Flash2,
                              AttentionKernel::Fused, AttentionKernel::Triton};
constexpr int kUnfusedAttention = int(kKernels.size());

template <typename T, std::size_t N> int indexOf(const std::array<T, N>& values, T v)
{
    return int(std::find(values.begin(), values.end(), v) - values.begin());
}

template <typename T, std::size_t N>
QComboBox* namedBox(QWidget* parent, const std::array<T, N>& values, const QString& tip)
{
    auto* box = new QComboBox(parent);
    for (T v : values)
        box->addItem(qText(toString(v)));
    box->setToolTip(tip);
    return box;
}

// Live when the model reads the setting, or when it is set away from its default (so it can
// be put back).
void setLive(QWidget* w, bool applies, bool set)
{
    w->setEnabled(applies || set);
}

} // namespace

FrameworkControls::FrameworkControls(QWidget* parent, QFormLayout* form, const AddRow& addRow)
    : QObject(parent)
{
    m_framework = new QComboBox(parent);
    m_framework->addItems({tr("Megatron-LM"), tr("DeepSpeed"), tr("PyTorch FSDP")});
    m_framework->setToolTip(tr("The training framework whose defaults the model follows (PyTorch "
                               "FSDP: torchtitan's): dtypes, "
                               "buckets, sharding, fused kernels (docs/model.md)"));
    m_attention = new QComboBox(parent);
    m_attention->addItems({tr("framework default"), tr("FlashAttention-2"), tr("cuDNN fused"),
                           tr("Triton flash"), tr("unfused (no flash)")});
    m_attention->setToolTip(tr("The attention kernel: the framework's own flash kernel, a named "
                               "one, or unfused softmax with the s² scores stored"));
    m_fp8Recipe = namedBox(parent, kFp8Recipes,
                           tr("How FP8 GEMM operands are scaled; read only with FP8 precision"));
    m_gradDtype = namedBox(parent, kGradDtypes,
                           tr("The dtype gradients are accumulated and reduced in over DP "
                              "(default: Megatron fp32 main grads, DeepSpeed the training "
                              "dtype, FSDP fp32)"));
    m_moments = namedBox(parent, kMoments,
                         tr("The dtype Adam keeps its two moments in: bf16 is Megatron-Core's "
                            "precision-aware optimizer (--exp-avg-dtype, --exp-avg-sq-dtype)"));
    m_tpOverlap = new QCheckBox(tr("TP comm overlap"), parent);
    m_tpOverlap->setToolTip(
        tr("Overlap TP collectives with the GEMMs (Megatron "
           "--tp-comm-overlap, torchtitan AsyncTP); TP > 1 with sequence parallel"));
    m_gradOverlap = new QCheckBox(tr("Overlap DP reduce"), parent);
    m_gradOverlap->setToolTip(tr("Reduce gradient buckets while the backward runs; off, the "
                                 "reduction starts after the whole backward"));
    m_compile = new QCheckBox(tr("torch.compile"), parent);
    m_compile->setToolTip(tr("Fuse PyTorch FSDP's element-wise ops (Megatron-LM and DeepSpeed "
                             "always run fused kernels)"));
    m_fp8Params = new QCheckBox(tr("FP8 parameters"), parent);
    m_fp8Params->setToolTip(
        tr("Megatron in FP8: the weights are FP8 parameters, gathered in FP8 (--fp8-param-gather); "
           "off, Transformer Engine keeps an FP8 copy beside each bf16 weight"));
    m_fsdpVersion = new QComboBox(parent);
    m_fsdpVersion->addItems({tr("FSDP2 (fully_shard)"), tr("FSDP1 (flat parameters)")});
    m_fsdpVersion->setToolTip(tr("PyTorch FSDP under ZeRO 2/3: FSDP2 copies around each "
                                 "collective; FSDP1 (Composer, Accelerate) assembles flat "
                                 "gradients"));
    m_prefetch =
        namedBox(parent, kPrefetches, tr("When FSDP gathers the next unit in backward (ZeRO 3)"));
    m_reshard = namedBox(parent, kReshards,
                         tr("Whether FSDP frees a block's gathered parameters after its forward "
                            "(ZeRO 3)"));

    m_recomputeModules = new QToolButton(parent);
    m_recomputeModules->setPopupMode(QToolButton::InstantPopup);
    m_recomputeModules->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    m_recomputeTip =
        tr("What Megatron's selective recompute repeats in the backward (--recompute-modules); "
           "read with recompute selective");
    m_recomputeModules->setToolTip(m_recomputeTip);
    auto* modules = new QMenu(m_recomputeModules);
    for (int bit = 0; bit < kRecomputeModuleCount; ++bit) {
        QAction* a = modules->addAction(qText(toString(RecomputeModule(1 << bit))));
        a->setCheckable(true);
        m_moduleActions[std::size_t(bit)] = a;
    }
    m_recomputeModules->setMenu(modules);

    // The framework is always shown; its settings fold away (unpainted) until asked for, and
    // the toggle says how many are set away from the framework's defaults.
    m_more = new QToolButton(parent);
    m_more->setCheckable(true);
    m_more->setAutoRaise(true);
    m_more->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_more->setArrowType(Qt::RightArrow);
    m_more->setToolTip(tr("Show the framework's settings"));
    m_details = new QWidget(parent);
    m_detailsForm = new QFormLayout(m_details);
    m_detailsForm->setContentsMargins(0, 0, 0, 0);
    m_detailsForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_details->setVisible(false);
    connect(m_more, &QToolButton::toggled, this, [this](bool open) {
        m_more->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
        m_details->setVisible(open);
    });

    addRow(form, tr("&Framework"), m_framework);
    form->addRow(m_more);
    form->addRow(m_details);
    QFormLayout* d = m_detailsForm;
    addRow(d, tr("&Attention"), m_attention);
    addRow(d, tr("FP8 reci&pe"), m_fp8Recipe);
    d->addRow(m_fp8Params);
    addRow(d, tr("&Gradient dtype"), m_gradDtype);
    addRow(d, tr("Adam m&oments"), m_moments);
    d->addRow(m_tpOverlap);
    d->addRow(m_gradOverlap);
    d->addRow(m_compile);
    addRow(d, tr("FSDP &version"), m_fsdpVersion);
    addRow(d, tr("Backward prefetc&h"), m_prefetch);
    addRow(d, tr("Reshard after forward"), m_reshard);
    addRow(d, tr("Recompute &modules"), m_recomputeModules);
    m_more->setAccessibleName(tr("Framework settings"));
    m_recomputeModules->setAccessibleName(tr("Recompute modules"));
    for (QCheckBox* c : {m_fp8Params, m_tpOverlap, m_gradOverlap, m_compile})
        c->setAccessibleName(c->text());
    // Long item names must not widen the scenario column: the boxes elide instead.
    for (QComboBox* b : {m_framework, m_attention, m_fp8Recipe, m_gradDtype, m_moments,
                         m_fsdpVersion, m_prefetch, m_reshard}) {
        b->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        b->setMinimumContentsLength(12);
    }
    connectEdits();
}

template <typename Widget, typename Signal, typename Apply>
void FrameworkControls::onEdit(Widget* w, Signal signal, const char* field, Apply apply)
{
    connect(w, signal, this, [this, field, apply](auto value) {
        Scenario s = m_scenario;
        apply(s, value);
        commit(s, field);
    });
}

void FrameworkControls::connectEdits()
{
    using Box = QComboBox;
    onEdit(m_framework, &Box::activated, "training.framework",
           [](Scenario& s, int i) { s.training.framework = kFrameworks[std::size_t(i)]; });
    onEdit(m_attention, &Box::activated, "training.attention_kernel", [](Scenario& s, int i) {
        s.training.flash_attention = i != kUnfusedAttention;
        if (i != kUnfusedAttention)
            s.training.attention_kernel = kKernels[std::size_t(i)];
    });
    onEdit(m_fp8Recipe, &Box::activated, "training.fp8_recipe",
           [](Scenario& s, int i) { s.training.fp8_recipe = kFp8Recipes[std::size_t(i)]; });
    onEdit(m_fp8Params, &QCheckBox::toggled, "training.fp8_param_gather",
           [](Scenario& s, bool on) { s.training.fp8_param_gather = on; });
    onEdit(m_gradDtype, &Box::activated, "training.grad_reduce_dtype",
           [](Scenario& s, int i) { s.training.grad_reduce_dtype = kGradDtypes[std::size_t(i)]; });
    onEdit(m_moments, &Box::activated, "training.adam_moments_dtype",
           [](Scenario& s, int i) { s.training.adam_moments_dtype = kMoments[std::size_t(i)]; });
    onEdit(m_tpOverlap, &QCheckBox::toggled, "parallel.tp_comm_overlap",
           [](Scenario& s, bool on) { s.parallel.tp_comm_overlap = on; });
    onEdit(m_gradOverlap, &QCheckBox::toggled, "training.overlap_grad_reduce",
           [](Scenario& s, bool on) { s.training.overlap_grad_reduce = on; });
    onEdit(m_compile, &QCheckBox::toggled, "training.compile",
           [](Scenario& s, bool on) { s.training.compile = on; });
    onEdit(m_fsdpVersion, &Box::activated, "training.fsdp_version",
           [](Scenario& s, int i) { s.training.fsdp_version = i == 1 ? 1 : 2; });
    onEdit(m_prefetch, &Box::activated, "training.fsdp_backward_prefetch", [](Scenario& s, int i) {
        s.training.fsdp_backward_prefetch = kPrefetches[std::size_t(i)];
    });
    for (int bit = 0; bit < kRecomputeModuleCount; ++bit)
        onEdit(m_moduleActions[std::size_t(bit)], &QAction::toggled, "training.recompute_modules",
               [bit](Scenario& s, bool on) {
                   const auto m = std::uint8_t(1 << bit);
                   s.training.recompute_modules =
                       on ? s.training.recompute_modules | m : s.training.recompute_modules & ~m;
               });
    onEdit(m_reshard, &Box::activated, "training.fsdp_reshard_after_forward",
           [](Scenario& s, int i) {
               s.training.fsdp_reshard_after_forward = kReshards[std::size_t(i)];
           });
}

void FrameworkControls::commit(const Scenario& s, const char* field)
{
    emit edited(s, QString::fromLatin1(field));
}

void FrameworkControls::show(const Scenario& s)
{
    m_scenario = s;
    const TrainingSettings& t = s.training;
    const QSignalBlocker b0(m_gradDtype), b1(m_framework), b2(m_attention), b3(m_fp8Recipe),
        b4(m_tpOverlap), b5(m_gradOverlap), b6(m_compile), b7(m_fsdpVersion), b8(m_prefetch),
        b9(m_reshard), b10(m_fp8Params), b11(m_moments);
    m_framework->setCurrentIndex(indexOf(kFrameworks, t.framework));
    m_attention->setCurrentIndex(t.flash_attention ? indexOf(kKernels, t.attention_kernel)
                                                   : kUnfusedAttention);
    m_fp8Recipe->setCurrentIndex(indexOf(kFp8Recipes, t.fp8_recipe));
    m_gradDtype->setCurrentIndex(indexOf(kGradDtypes, t.grad_reduce_dtype));
    m_moments->setCurrentIndex(indexOf(kMoments, t.adam_moments_dtype));
    m_fp8Params->setChecked(t.fp8_param_gather);
    m_tpOverlap->setChecked(s.parallel.tp_comm_overlap);
    m_gradOverlap->setChecked(t.overlap_grad_reduce);
    m_compile->setChecked(t.compile);
    m_fsdpVersion->setCurrentIndex(t.fsdp_version == 1 ? 1 : 0);
    m_prefetch->setCurrentIndex(indexOf(kPrefetches, t.fsdp_backward_prefetch));
    m_reshard->setCurrentIndex(indexOf(kReshards, t.fsdp_reshard_after_forward));
    QStringList names;
    for (int bit = 0; bit < kRecomputeModuleCount; ++bit) {
        QAction* a = m_moduleActions[std::size_t(bit)];
        const QSignalBlocker block(a);
        a->setChecked(t.recompute_modules & (1 << bit));
        if (a->isChecked())
            names << a->text();
    }
    // Two names fit the settings column; more are counted (the tooltip lists them).
    const QString list = names.isEmpty() ? tr("none") : names.join(QStringLiteral(", "));
    m_recomputeModules->setText(names.size() <= 2 ? list
                                                  : tr("%n modules", nullptr, int(names.size())));
    m_recomputeModules->setToolTip(m_recomputeTip + QStringLiteral("\n") + list);

    const int set = (!t.flash_attention || t.attention_kernel != AttentionKernel::Default) +
                    (t.fp8_recipe != Fp8Recipe::Default) + t.fp8_param_gather +
                    (t.grad_reduce_dtype != GradReduceDtype::Default) + s.parallel.tp_comm_overlap +
                    !t.overlap_grad_reduce + t.compile + (t.fsdp_version != 2) +
                    (t.fsdp_backward_prefetch != FsdpBackwardPrefetch::Default) +
                    (t.fsdp_reshard_after_forward != ReshardAfterForward::Default) +
                    (t.recompute_modules != kRecomputeCoreAttn) +
                    (t.adam_moments_dtype != AdamMomentsDtype::Fp32);
    m_more->setText(set == 0 ? tr("Settings: defaults") : tr("Settings: %n set", nullptr, set));

    const FrameworkOptions o = frameworkOptions(s);
    setLive(m_fp8Recipe, o.fp8_recipe, t.fp8_recipe != Fp8Recipe::Default);
    setLive(m_fp8Params, o.fp8_param_gather, t.fp8_param_gather);
    setLive(m_tpOverlap, o.tp_comm_overlap, s.parallel.tp_comm_overlap);
    setLive(m_compile, o.compile, t.compile);
    setLive(m_fsdpVersion, o.fsdp_version, t.fsdp_version != 2);
    setLive(m_prefetch, o.fsdp_prefetch, t.fsdp_backward_prefetch != FsdpBackwardPrefetch::Default);
    setLive(m_reshard, o.fsdp_reshard,
            t.fsdp_reshard_after_forward != ReshardAfterForward::Default);
    setLive(m_recomputeModules, o.recompute_modules, t.recompute_modules != kRecomputeCoreAttn);
    setLive(m_moments, o.adam_moments, t.adam_moments_dtype != AdamMomentsDtype::Fp32);
}

QWidget* FrameworkControls::widgetForField(const std::string& field) const
{
    const std::map<std::string, QWidget*> fields{{"training.framework", m_framework},
                                                 {"training.flash_attention", m_attention},
                                                 {"training.attention_kernel", m_attention},
                                                 {"training.fp8_recipe", m_fp8Recipe},
                                                 {"training.grad_reduce_dtype", m_gradDtype},
                                                 {"training.fp8_param_gather", m_fp8Params},
                                                 {"parallel.tp_comm_overlap", m_tpOverlap},
                                                 {"training.overlap_grad_reduce", m_gradOverlap},
                                                 {"training.compile", m_compile},
                                                 {"training.fsdp_version", m_fsdpVersion},
                                                 {"training.fsdp_backward_prefetch", m_prefetch},
                                                 {"training.fsdp_reshard_after_forward", m_reshard},
                                                 {"training.recompute_modules", m_recomputeModules},
                                                 {"training.adam_moments_dtype", m_moments}};
    const auto it = fields.find(field);
    return it == fields.end() ? nullptr : it->second;
}

} // namespace paralens
