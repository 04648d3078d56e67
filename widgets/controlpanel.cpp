// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/controlpanel.h"
#include "core/plan_options.h"
#include "core/plan_rebalance.h"
#include "core/presets.h"
#include "widgets/field_labels.h"
#include "widgets/frameworkcontrols.h"
#include "widgets/palette.h"
#include "widgets/qt_text.h"
#include "widgets/snapslider.h"

#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

namespace paralens {
namespace {

/// DP that makes tp·pp·cp·dp = gpus, or the old DP when no integer DP does (validation then
/// names the rule).
int derivedDp(const Scenario& s)
{
    const std::int64_t dp =
        gpusLeft(s.gpus, std::int64_t{s.parallel.tp} * s.parallel.pp * s.parallel.cp);
    return dp > 0 ? static_cast<int>(dp) : s.parallel.dp;
}

QComboBox* enumBox(QWidget* parent, const QStringList& items, const QString& tip)
{
    auto* box = new QComboBox(parent);
    box->addItems(items);
    box->setToolTip(tip);
    return box;
}

QSpinBox* spinBox(QWidget* parent, int min, int max, const QString& tip)
{
    auto* box = new QSpinBox(parent);
    box->setRange(min, max);
    box->setToolTip(tip);
    box->setKeyboardTracking(false); // one edit per typed number, not per digit
    box->setGroupSeparatorShown(true);
    return box;
}

const Recompute kRecomputes[] = {Recompute::None, Recompute::Selective, Recompute::Full};

} // namespace

ControlPanel::ControlPanel(const PresetLibrary& presets, QWidget* parent)
    : QWidget(parent), m_presets(presets)
{
    setAccessibleName(tr("Scenario controls"));
    build();
}

void ControlPanel::build()
{
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(6, 6, 6, 6);

    m_banner = new QLabel(this);
    m_banner->setWordWrap(true);
    m_banner->setAutoFillBackground(true);
    m_banner->setMargin(6);
    m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_banner->setAccessibleName(tr("Plan validation"));
    m_banner->hide();

    auto addGroup = [&](const QString& title) {
        auto* group = new QGroupBox(title, this);
        auto* form = new QFormLayout(group);
        form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
        column->addWidget(group);
        m_forms.push_back(form);
        return std::pair{group, form};
    };
    auto addRow = [&](QFormLayout* form, const QString& label, QWidget* w) {
        form->addRow(label, w);
        m_fieldLabels[w] = label;
        w->setAccessibleName(QString(label).remove(QLatin1Char('&')));
    };

    // Model and cluster.
    auto [clusterGroup, clusterForm] = addGroup(tr("Model and cluster"));
    m_model = new QComboBox(clusterGroup);
    for (const auto& id : m_presets.modelIds())
        m_model->addItem(QString::fromStdString(id), QString::fromStdString(id));
    m_model->setToolTip(tr("The transformer to train (preset from a paper or model card)"));
    m_hardware = new QComboBox(clusterGroup);
    for (const auto& id : m_presets.hardwareIds())
        m_hardware->addItem(QString::fromStdString(id), QString::fromStdString(id));
    m_hardware->setToolTip(tr("The GPU and node type the cluster is built from"));
    m_gpus = spinBox(clusterGroup, 1, 1 << 24, tr("Total GPUs; DP follows as GPUs ÷ (TP·PP·CP)"));
    addRow(clusterForm, tr("&Model"), m_model);
    addRow(clusterForm, tr("&Hardware"), m_hardware);
    addRow(clusterForm, tr("&GPUs"), m_gpus);

    // Parallel degrees.
    auto [parGroup, parForm] = addGroup(tr("Parallelism"));
    const QString names[DimensionCount] = {tr("TP"), tr("PP"), tr("DP"), tr("EP"), tr("CP")};
    const QString tips[DimensionCount] = {
        tr("Tensor parallel: splits each layer's matrices over GPUs of one NVLink domain"),
        tr("Pipeline parallel: splits the layers into stages that pass activations on"),
        tr("Data parallel: model replicas; changing it changes the GPU count"),
        tr("Expert parallel: spreads an MoE layer's experts over the DP×CP ranks"),
        tr("Context parallel: splits each sequence over GPUs (ring attention)"),
    };
    const char* fields[DimensionCount] = {"parallel.tp", "parallel.pp", "parallel.dp",
                                          "parallel.ep", "parallel.cp"};
    for (int d = 0; d < DimensionCount; ++d) {
        m_sliders[d] = new SnapSlider(names[d], tips[d], parGroup);
        parForm->addRow(m_sliders[d]);
        const QString field = QString::fromLatin1(fields[d]);
        connect(m_sliders[d], &SnapSlider::valueEdited, this, [this, d, field](int v, int drag) {
            Scenario s = m_scenario;
            ParallelPlan& p = s.parallel;
            switch (d) {
            case Tp:
                p.tp = v;
                break;
            case Pp:
                p.pp = v;
                break;
            case Cp:
                p.cp = v;
                break;
            case Ep:
                p.ep = v;
                break;
            case Dp:
                p.dp = v;
                s.gpus = p.tp * p.pp * p.cp * v; // more replicas means more GPUs
                break;
            }
            if (d == Tp || d == Pp || d == Cp)
                p.dp = derivedDp(s);
            commit(s, field, drag);
        });
    }

    // Pipeline schedule.
    auto [pipeGroup, pipeForm] = addGroup(tr("Pipeline"));
    QStringList scheduleNames;
    for (Schedule sc : kAllSchedules)
        scheduleNames << qText(toString(sc));
    m_schedule = enumBox(pipeGroup, scheduleNames,
                         tr("Order of forward/backward passes per stage; sets the bubble and the "
                            "activations in flight"));
    m_virtualStages = spinBox(pipeGroup, 1, 128,
                              tr("Model chunks per GPU (interleaved and V schedules); shrinks the "
                                 "bubble by this factor"));
    addRow(pipeForm, tr("&Schedule"), m_schedule);
    addRow(pipeForm, tr("&Virtual stages"), m_virtualStages);

    // Memory savers.
    auto [memGroup, memForm] = addGroup(tr("Memory"));
    m_zero = enumBox(memGroup,
                     {tr("0 — replicated"), tr("1 — optimizer states sharded"),
                      tr("2 — + gradients sharded"), tr("3 — + parameters (FSDP)")},
                     tr("ZeRO stage: how much of the model state is sharded over DP"));
    m_recompute = enumBox(memGroup, {tr("none"), tr("selective"), tr("full")},
                          tr("Activation recomputation: trade compute for activation memory"));
    m_recomputeLayers = spinBox(
        memGroup, 0, 1,
        tr("With full recompute: how many layers of each model chunk are recomputed, the first "
           "ones (Megatron --recompute-method block --recompute-num-layers); the chunk's other "
           "layers keep all their activations. All: every layer"));
    m_recomputeLayers->setSpecialValueText(tr("all layers"));
    m_recomputeLayers->setSuffix(tr(" layers"));
    m_sequenceParallel = new QCheckBox(tr("Se&quence parallel"), memGroup);
    m_sequenceParallel->setToolTip(
        tr("Shard LayerNorm/dropout activations over TP ranks (Korthikanti et al. 2022)"));
    m_precision = enumBox(
        memGroup, {QStringLiteral("bf16"), QStringLiteral("fp8"), QStringLiteral("fp16")},
        tr("Matmul precision; FP8 doubles the peak where the GPU has it; FP16 runs at BF16's "
           "rate with loss scaling"));
    addRow(memForm, tr("&ZeRO"), m_zero);
    // The layer count sits beside the mode it refines, so the form keeps its width.
    m_recomputeRow = new QWidget(memGroup);
    auto* recomputeLayout = new QHBoxLayout(m_recomputeRow);
    recomputeLayout->setContentsMargins(0, 0, 0, 0);
    recomputeLayout->addWidget(m_recompute, 1);
    recomputeLayout->addWidget(m_recomputeLayers);
    m_recomputeRow->setFocusProxy(m_recompute);
    addRow(memForm, tr("&Recompute"), m_recomputeRow);
    m_recompute->setAccessibleName(tr("Recompute"));
    m_recomputeLayers->setAccessibleName(tr("Recompute layers"));
    memForm->addRow(m_sequenceParallel);
    m_fieldLabels[m_sequenceParallel] = m_sequenceParallel->text();
    m_sequenceParallel->setAccessibleName(tr("Sequence parallel"));
    addRow(memForm, tr("Pr&ecision"), m_precision);

    // Batch.
    auto [batchGroup, batchForm] = addGroup(tr("Batch"));
    m_microBatch = spinBox(batchGroup, 1, 65536, tr("Sequences per micro-batch (b)"));
    m_globalBatch =
        spinBox(batchGroup, 1, 1 << 24, tr("Sequences per optimizer step (B); a multiple of b·DP"));
    m_seqLen = spinBox(batchGroup, 1, 1 << 24, tr("Tokens per sequence (s)"));
    m_seqLen->setSingleStep(1024);
    addRow(batchForm, tr("M&icro-batch"), m_microBatch);
    addRow(batchForm, tr("G&lobal batch"), m_globalBatch);
    addRow(batchForm, tr("Seq&uence length"), m_seqLen);

    // Framework and its settings.
    auto [fwGroup, fwForm] = addGroup(tr("Framework"));
    m_frameworkControls = new FrameworkControls(
        fwGroup, fwForm,
        [&](QFormLayout* form, const QString& label, QWidget* w) { addRow(form, label, w); });
    m_forms.push_back(m_frameworkControls->detailsForm());
    for (QCheckBox* c : fwGroup->findChildren<QCheckBox*>())
        m_fieldLabels[c] = c->text();
    connect(m_frameworkControls, &FrameworkControls::edited, this,
            [this](const Scenario& s, const QString& field) { commit(s, field); });

    m_derived = new QLabel(this);
    m_derived->setWordWrap(true);
    m_derived->setAccessibleName(tr("Derived plan figures"));
    column->addWidget(m_derived);
    column->addWidget(m_banner);
    column->addStretch(1);

    // Edits.
    connect(m_model, &QComboBox::activated, this, [this](int i) {
        const std::string id = m_model->itemData(i).toString().toStdString();
        if (const ModelSpec* m = m_presets.model(id)) {
            Scenario s = m_scenario;
            s.model = *m;
            s.model_id = id;
            commit(s, QStringLiteral("model"));
        }
    });
    connect(m_hardware, &QComboBox::activated, this, [this](int i) {
        const std::string id = m_hardware->itemData(i).toString().toStdString();
        if (const ClusterSpec* c = m_presets.hardware(id)) {
            Scenario s = m_scenario;
            s.cluster = *c;
            s.hardware_id = id;
            commit(s, QStringLiteral("hardware"));
        }
    });
    connect(m_gpus, &QSpinBox::valueChanged, this, [this](int v) {
        // DP takes the new count; when it cannot, PP, CP and TP give way and the panel says
        // so, rather than leaving a plan that cannot run.
        const Rebalanced r = rebalanceForGpus(m_scenario, v);
        QStringList changes;
        for (const std::string& c : r.changes)
            changes << QString::fromStdString(c);
        m_rebalanceNote = changes.isEmpty()
                              ? QString()
                              : tr("GPUs %1 → %2: %3")
                                    .arg(QLocale().toString(m_scenario.gpus), QLocale().toString(v),
                                         changes.join(QStringLiteral(", ")));
        m_rebalanced = r.scenario;
        commit(r.scenario, QStringLiteral("gpus"));
    });
    connect(m_schedule, &QComboBox::activated, this, [this](int i) {
        Scenario s = m_scenario;
        s.parallel = withSchedule(s.parallel, kAllSchedules[std::size_t(i)]);
        commit(s, QStringLiteral("parallel.schedule"));
    });
    connect(m_virtualStages, &QSpinBox::valueChanged, this, [this](int v) {
        Scenario s = m_scenario;
        s.parallel.virtual_stages = v;
        commit(s, QStringLiteral("parallel.virtual_stages"));
    });
    connect(m_zero, &QComboBox::activated, this, [this](int i) {
        Scenario s = m_scenario;
        s.parallel.zero = i;
        commit(s, QStringLiteral("parallel.zero"));
    });
    connect(m_recompute, &QComboBox::activated, this, [this](int i) {
        Scenario s = m_scenario;
        s.training.recompute = kRecomputes[i];
        // A layer count belongs to full recompute (validate: recompute_num_layers_full).
        if (s.training.recompute != Recompute::Full)
            s.training.recompute_num_layers = 0;
        commit(s, QStringLiteral("training.recompute"));
    });
    connect(m_recomputeLayers, &QSpinBox::valueChanged, this, [this](int n) {
        Scenario s = m_scenario;
        s.training.recompute_num_layers = n;
        commit(s, QStringLiteral("training.recompute_num_layers"));
    });
    connect(m_sequenceParallel, &QCheckBox::toggled, this, [this](bool on) {
        Scenario s = m_scenario;
        s.parallel.sequence_parallel = on;
        commit(s, QStringLiteral("parallel.sequence_parallel"));
    });
    connect(m_precision, &QComboBox::activated, this, [this](int i) {
        Scenario s = m_scenario;
        s.training.precision = i == 1 ? Precision::FP8 : i == 2 ? Precision::FP16 : Precision::BF16;
        commit(s, QStringLiteral("training.precision"));
    });
    connect(m_microBatch, &QSpinBox::valueChanged, this, [this](int v) {
        Scenario s = m_scenario;
        s.training.micro_batch = v;
        commit(s, QStringLiteral("training.micro_batch"));
    });
    connect(m_globalBatch, &QSpinBox::valueChanged, this, [this](int v) {
        Scenario s = m_scenario;
        s.training.global_batch = v;
        commit(s, QStringLiteral("training.global_batch"));
    });
    connect(m_seqLen, &QSpinBox::valueChanged, this, [this](int v) {
        Scenario s = m_scenario;
        s.training.seq_len = v;
        commit(s, QStringLiteral("training.seq_len"));
    });
}

void ControlPanel::commit(const Scenario& s, const QString& field, int mergeKey)
{
    emit edited(s, field, mergeKey);
}

void ControlPanel::setScenario(const Scenario& s)
{
    m_scenario = s;
    refreshValues();
}

void ControlPanel::setErrors(const std::vector<ValidationError>& errors)
{
    m_errors = errors;
    showValidation();
}

void ControlPanel::refreshValues()
{
    const Scenario& s = m_scenario;
    const ParallelPlan& p = s.parallel;
    // Showing a scenario is no edit: no control may report it back.
    const QSignalBlocker b1(m_model), b2(m_hardware), b3(m_gpus), b4(m_schedule),
        b5(m_virtualStages), b6(m_zero), b7(m_recompute), b8(m_sequenceParallel), b9(m_precision),
        b10(m_microBatch), b11(m_globalBatch), b12(m_seqLen), b13(m_sliders[Tp]),
        b14(m_sliders[Pp]), b15(m_sliders[Dp]), b16(m_sliders[Ep]), b17(m_sliders[Cp]),
        b18(m_recomputeLayers);

    auto selectId = [](QComboBox* box, const std::string& id, const std::string& name) {
        const QString qid = QString::fromStdString(id);
        int i = id.empty() ? -1 : box->findData(qid);
        if (i < 0) { // a custom spec from a file: show it under its own name
            const QString label = QObject::tr("custom: %1").arg(QString::fromStdString(name));
            i = box->findText(label);
            if (i < 0) {
                box->addItem(label, QString());
                i = box->count() - 1;
            }
        }
        box->setCurrentIndex(i);
    };
    selectId(m_model, s.model_id, s.model.name);
    selectId(m_hardware, s.hardware_id, s.cluster.name);
    m_gpus->setValue(s.gpus);

    const PlanDegrees degrees = planDegrees(s);
    m_sliders[Tp]->setValues(degrees.tp, p.tp);
    m_sliders[Pp]->setValues(degrees.pp, p.pp);
    m_sliders[Cp]->setValues(degrees.cp, p.cp);
    m_sliders[Dp]->setValues(degrees.dp, p.dp);
    m_sliders[Ep]->setValues(degrees.ep, p.ep);

    const auto sched = std::find(kAllSchedules.begin(), kAllSchedules.end(), p.schedule);
    m_schedule->setCurrentIndex(static_cast<int>(sched - kAllSchedules.begin()));
    // The spin box spans the schedule's valid v (and the plan's own, so a broken v can be
    // stepped back); it is live only when there is a choice or a v to fix.
    const std::vector<int>& vs = degrees.virtual_stages;
    const bool validV = std::find(vs.begin(), vs.end(), p.virtual_stages) != vs.end();
    m_virtualStages->setRange(
        vs.empty() ? p.virtual_stages : std::min(vs.front(), p.virtual_stages),
        vs.empty() ? p.virtual_stages : std::max(vs.back(), p.virtual_stages));
    m_virtualStages->setValue(p.virtual_stages);
    m_virtualStages->setEnabled(vs.size() > 1 || (!vs.empty() && !validV));
    m_zero->setCurrentIndex(std::clamp(p.zero, 0, 3));
    const auto rc = std::find(std::begin(kRecomputes), std::end(kRecomputes), s.training.recompute);
    m_recompute->setCurrentIndex(static_cast<int>(rc - std::begin(kRecomputes)));
    // Megatron's module list (training.recompute_modules) has no control of its own: say it.
    const QString modules = qText(recomputeModuleList(s.training.recompute_modules, ", "));
    const bool listed =
        s.training.recompute == Recompute::Selective && s.training.framework == Framework::Megatron;
    // Under FSDP, selective is torchtitan's per-op policy (core/kernel_time.cpp).
    const bool opSac =
        s.training.recompute == Recompute::Selective && s.training.framework == Framework::FSDP;
    QString detail;
    if (listed)
        detail = tr("Selective recomputes: %1 (training.recompute_modules)")
                     .arg(modules.isEmpty() ? tr("nothing") : modules);
    else if (opSac)
        detail = tr("Selective is torchtitan's per-op policy: it saves the Q, V and first and last "
                    "MLP matmul outputs and the attention output, and recomputes K, O, the other "
                    "MLP matmul and every element-wise op");
    m_recompute->setToolTip(tr("Activation recomputation: trade compute for activation memory") +
                            (detail.isEmpty() ? QString() : QStringLiteral("\n") + detail));
    // Up to a chunk's layers (more recomputes no more); live with full recompute, or to clear
    // a count left under another mode.
    const int chunks = std::max(1, p.pp) * std::max(1, p.virtual_stages);
    const int n = s.training.recompute_num_layers;
    m_recomputeLayers->setRange(0, std::max({1, (s.model.layers + chunks - 1) / chunks, n}));
    m_recomputeLayers->setValue(n);
    m_recomputeLayers->setEnabled(s.training.recompute == Recompute::Full || n > 0);
    m_sequenceParallel->setChecked(p.sequence_parallel);
    m_sequenceParallel->setEnabled(p.tp > 1 || p.sequence_parallel);
    m_precision->setCurrentIndex(s.training.precision == Precision::FP8    ? 1
                                 : s.training.precision == Precision::FP16 ? 2
                                                                           : 0);
    m_microBatch->setValue(s.training.micro_batch);
    m_globalBatch->setValue(s.training.global_batch);
    m_seqLen->setValue(s.training.seq_len);
    m_frameworkControls->show(s);

    m_derived->setText(derivedText());
}

QString ControlPanel::derivedText() const
{
    const Scenario& s = m_scenario;
    const ParallelPlan& p = s.parallel;
    const QLocale locale;
    const int perNode = std::max(1, s.cluster.gpus_per_node);
    QString derived;
    if (s.gpus < perNode)
        derived = tr("%1 of the %2 GPUs of one node").arg(locale.toString(s.gpus)).arg(perNode);
    else if (s.gpus % perNode != 0)
        derived = tr("%1 GPUs are not whole nodes of %2").arg(locale.toString(s.gpus)).arg(perNode);
    else if (s.gpus == perNode)
        derived = tr("1 node of %1 GPUs").arg(perNode);
    else
        derived = tr("%1 nodes of %2 GPUs").arg(locale.toString(s.gpus / perNode)).arg(perNode);
    // Micro-batches only for a plan whose degrees multiply to the GPU count: another plan's
    // count would be a stale figure.
    const long long bdp = 1LL * s.training.micro_batch * p.dp;
    const long long product = 1LL * p.tp * p.pp * p.cp * p.dp;
    if (bdp > 0 && product == s.gpus && s.training.global_batch % bdp == 0) {
        const long long m = s.training.global_batch / bdp;
        derived += m == 1 ? tr(" · 1 micro-batch per step")
                          : tr(" · %1 micro-batches per step").arg(locale.toString(m));
    }
    const ParallelPlan& r = m_rebalanced.parallel;
    if (!m_rebalanceNote.isEmpty() && m_rebalanced.gpus == s.gpus && r.tp == p.tp && r.pp == p.pp &&
        r.cp == p.cp && r.dp == p.dp && r.ep == p.ep)
        derived += QLatin1Char('\n') + m_rebalanceNote;
    return derived;
}

QWidget* ControlPanel::widgetForField(const std::string& field) const
{
    static const std::map<std::string, int> dims{{"parallel.tp", Tp},
                                                 {"parallel.pp", Pp},
                                                 {"parallel.dp", Dp},
                                                 {"parallel.ep", Ep},
                                                 {"parallel.cp", Cp}};
    if (auto it = dims.find(field); it != dims.end())
        return m_sliders[it->second];
    const std::map<std::string, QWidget*> others{{"gpus", m_gpus},
                                                 {"model", m_model},
                                                 {"hardware", m_hardware},
                                                 {"parallel.schedule", m_schedule},
                                                 {"parallel.virtual_stages", m_virtualStages},
                                                 {"parallel.zero", m_zero},
                                                 {"parallel.sequence_parallel", m_sequenceParallel},
                                                 {"training.recompute", m_recomputeRow},
                                                 {"training.recompute_num_layers", m_recomputeRow},
                                                 {"training.precision", m_precision},
                                                 {"training.micro_batch", m_microBatch},
                                                 {"training.global_batch", m_globalBatch},
                                                 {"training.seq_len", m_seqLen}};
    if (auto it = others.find(field); it != others.end())
        return it->second;
    if (QWidget* w = m_frameworkControls->widgetForField(field))
        return w;
    if (field.rfind("model.", 0) == 0)
        return m_model;
    if (field.rfind("hardware.", 0) == 0)
        return m_hardware;
    return nullptr;
}

void ControlPanel::showValidation()
{
    std::map<QWidget*, QStringList> marked;
    QStringList lines;
    for (const ValidationError& e : m_errors) {
        const QString message = withFieldLabels(e.message);
        lines << message.toHtmlEscaped();
        for (const std::string& f : e.fields)
            if (QWidget* w = widgetForField(f))
                marked[w] << message;
    }
    for (SnapSlider* s : m_sliders)
        s->setError(marked.count(s) ? marked[s].join(QLatin1Char('\n')) : QString());
    for (QFormLayout* form : m_forms) {
        for (const auto& [w, text] : m_fieldLabels) {
            auto* label = qobject_cast<QLabel*>(form->labelForField(w));
            if (!label)
                continue;
            const bool bad = marked.count(w) > 0;
            label->setText(bad ? QStringLiteral("⚠ ") + text : text);
            label->setToolTip(bad ? marked[w].join(QLatin1Char('\n')) : QString());
        }
    }
    if (lines.isEmpty()) {
        m_banner->hide();
        m_banner->clear();
        return;
    }
    m_banner->setText(
        tr("<b>This plan cannot run</b><br>%1").arg(lines.join(QStringLiteral("<br>"))));
    QPalette p = m_banner->palette();
    QColor bg = palette::warning(palette());
    bg.setAlpha(45);
    p.setColor(QPalette::Window, bg);
    m_banner->setPalette(p);
    m_banner->show();
}

QString ControlPanel::bannerText() const
{
    return m_banner->isHidden() ? QString() : m_banner->text();
}

void ControlPanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange && m_banner)
        showValidation();
    QWidget::changeEvent(event);
}

} // namespace paralens
