// SPDX-License-Identifier: GPL-3.0-or-later
// The scenario controls: sliders snap to values that keep the plan runnable, keyboard moves
// them, DP follows TP·PP·CP, and a broken rule shows inline with its named message. An edit
// only asks for a change: the panel shows what it is handed back, and validates nothing.
#include "core/evaluate.h"
#include "core/framework_options.h"
#include "core/plan_options.h"
#include "core/presets.h"
#include "core/scenario_io.h"
#include "core/validate.h"
#include "widgets/controlpanel.h"
#include "widgets/frameworkcontrols.h"
#include "widgets/snapslider.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QMenu>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTest>
#include <QToolButton>

using namespace paralens;

class TestControlPanel : public QObject
{
    Q_OBJECT
    const PresetLibrary& presets() { return PresetLibrary::builtin(); }

    static std::vector<int> v(std::initializer_list<int> l) { return l; }
    static std::vector<int> withCurrent(std::vector<int> values, int current)
    {
        if (std::find(values.begin(), values.end(), current) == values.end())
            values.insert(std::upper_bound(values.begin(), values.end(), current), current);
        return values;
    }

    /// Stands in for the document and its evaluation, wired as the main window wires them:
    /// shows `s` with core's validation of it.
    static void show(ControlPanel& panel, const Scenario& s)
    {
        panel.setScenario(s);
        panel.setErrors(validate(s));
    }
    /// Hands every edit back to the panel, as the document's change does.
    static void echoEdits(ControlPanel& panel)
    {
        QObject::connect(&panel, &ControlPanel::edited, &panel,
                         [&panel](const Scenario& s) { show(panel, s); });
    }

private slots:
    void slidersSnapToRunnableValues()
    {
        // Default: llama3-70b (64 heads, 8 KV heads) on 64 H100 (NVLink domain 8), TP 8 PP 4
        // DP 2, interleaved v = 5, seq 8192, B = 128, b = 1.
        ControlPanel panel(presets());
        echoEdits(panel);
        show(panel, defaultScenario());
        // TP: divisors of gcd(64, 8) = 8 up to the domain 8.
        QCOMPARE(panel.slider(ControlPanel::Tp)->values(), v({1, 2, 4, 8}));
        // PP: divisors of 64 / (TP 8 · CP 1) = 8, with PP·v <= 80 layers.
        QCOMPARE(panel.slider(ControlPanel::Pp)->values(), v({1, 2, 4, 8}));
        // CP: divisors of 64 / (8·4) = 2 whose 2·cp divides 8192.
        QCOMPARE(panel.slider(ControlPanel::Cp)->values(), v({1, 2}));
        // DP: divisors of B / b = 128.
        QCOMPARE(panel.slider(ControlPanel::Dp)->values(), v({1, 2, 4, 8, 16, 32, 64, 128}));
        // A dense model has no experts: EP stays 1 and the slider is disabled.
        QCOMPARE(panel.slider(ControlPanel::Ep)->values(), v({1}));
        QVERIFY(!panel.slider(ControlPanel::Ep)->slider()->isEnabled());
        QVERIFY(panel.errors().empty());
        QVERIFY(panel.bannerText().isEmpty());
    }

    void moeExpertParallelValues()
    {
        Scenario s = defaultScenario();
        s.model_id = "mixtral-8x7b";
        s.model = *presets().model("mixtral-8x7b"); // 8 experts, 32 heads, 8 KV heads
        s.parallel = ParallelPlan{};
        s.parallel.tp = 8;
        s.parallel.dp = 8;
        s.parallel.sequence_parallel = true;
        ControlPanel panel(presets());
        echoEdits(panel);
        show(panel, s);
        QVERIFY2(panel.errors().empty(), qPrintable(panel.bannerText()));
        // EP divides 8 experts and DP·CP = 8.
        QCOMPARE(panel.slider(ControlPanel::Ep)->values(), v({1, 2, 4, 8}));
    }

    void keyboardMovesTpAndDerivesDp()
    {
        ControlPanel panel(presets());
        echoEdits(panel);
        show(panel, defaultScenario());
        QSignalSpy spy(&panel, &ControlPanel::edited);
        QSlider* tp = panel.slider(ControlPanel::Tp)->slider();
        tp->setFocus();
        QTest::keyClick(tp, Qt::Key_Left); // 8 -> 4
        QCOMPARE(spy.count(), 1);
        const auto s = spy.at(0).at(0).value<Scenario>();
        QCOMPARE(spy.at(0).at(1).toString(), QStringLiteral("parallel.tp"));
        QCOMPARE(s.parallel.tp, 4);
        QCOMPARE(s.parallel.dp, 4); // 64 / (4 · 4 · 1)
        QCOMPARE(s.gpus, 64);
        QCOMPARE(panel.slider(ControlPanel::Tp)->value(), 4);
        QCOMPARE(panel.scenario().parallel.dp, 4);
    }

    void anEditOnlyAsksForTheChange()
    {
        // No document behind the panel: a key press asks for TP 4 and changes nothing itself.
        ControlPanel panel(presets());
        show(panel, defaultScenario());
        QSignalSpy spy(&panel, &ControlPanel::edited);
        QTest::keyClick(panel.slider(ControlPanel::Tp)->slider(), Qt::Key_Left); // 8 -> 4
        QCOMPARE(spy.count(), 1);
        const auto asked = spy.at(0).at(0).value<Scenario>();
        QCOMPARE(asked.parallel.tp, 4);
        QCOMPARE(panel.scenario().parallel.tp, 8);
        QCOMPARE(panel.scenario().parallel.dp, 2);
        // Showing the document's answer emits no edit, from any control.
        Scenario answer = asked;
        answer.training.global_batch = 127; // also touches the batch spin box and DP slider
        answer.gpus = 60;
        panel.setScenario(answer);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(panel.slider(ControlPanel::Tp)->value(), 4);
        QCOMPARE(panel.gpusBox()->value(), 60);
        // The errors shown are the ones handed in, not a validation of its own.
        QVERIFY(panel.errors().empty());
        QVERIFY(panel.bannerText().isEmpty());
        panel.setErrors(validate(answer));
        QVERIFY(!panel.errors().empty());
        QVERIFY(panel.bannerText().contains(QStringLiteral("GPUs = 60")));
        panel.setErrors({});
        QVERIFY(panel.bannerText().isEmpty());
        QCOMPARE(spy.count(), 1);
    }

    void dpSliderScalesTheCluster()
    {
        ControlPanel panel(presets());
        echoEdits(panel);
        show(panel, defaultScenario());
        QSignalSpy spy(&panel, &ControlPanel::edited);
        QTest::keyClick(panel.slider(ControlPanel::Dp)->slider(), Qt::Key_Right); // 2 -> 4
        QCOMPARE(spy.count(), 1);
        QCOMPARE(panel.scenario().parallel.dp, 4);
        QCOMPARE(panel.scenario().gpus, 128); // 8 · 4 · 1 · 4
        QCOMPARE(panel.gpusBox()->value(), 128);
    }

    void impossiblePlanShowsNamedError()
    {
        ControlPanel panel(presets());
        echoEdits(panel);
        Scenario s = defaultScenario();
        s.training.global_batch = 127; // not a multiple of b·DP = 2
        show(panel, s);
        QVERIFY(!panel.errors().empty());
        QCOMPARE(QString::fromStdString(panel.errors().front().rule),
                 QStringLiteral("global_batch_multiple"));
        QVERIFY2(panel.bannerText().contains(QStringLiteral("global batch = 127")),
                 qPrintable(panel.bannerText()));
        QVERIFY(panel.slider(ControlPanel::Dp)->hasError()); // the rule names parallel.dp
        QVERIFY(!panel.slider(ControlPanel::Tp)->hasError());
        // Fixing it through the control clears the banner.
        s.training.global_batch = 128;
        show(panel, s);
        QVERIFY(panel.bannerText().isEmpty());
        QVERIFY(!panel.slider(ControlPanel::Dp)->hasError());
    }

    void gpuCountEditValidates()
    {
        ControlPanel panel(presets());
        echoEdits(panel);
        show(panel, defaultScenario());
        panel.gpusBox()->setValue(60); // not whole nodes, and 60 != 8·4·CP·DP
        QStringList rules;
        for (const auto& e : panel.errors())
            rules << QString::fromStdString(e.rule);
        QVERIFY2(rules.contains(QStringLiteral("gpus_product")), qPrintable(rules.join(',')));
        QVERIFY(rules.contains(QStringLiteral("gpus_whole_nodes")));
        QVERIFY(panel.bannerText().contains(QStringLiteral("GPUs = 60")));
    }

    void modelPickerSwitchesPreset()
    {
        ControlPanel panel(presets());
        echoEdits(panel);
        show(panel, defaultScenario());
        QSignalSpy spy(&panel, &ControlPanel::edited);
        QComboBox* box = panel.modelBox();
        const int i = box->findData(QStringLiteral("llama3-8b"));
        QVERIFY(i >= 0);
        box->setCurrentIndex(i);
        emit box->activated(i);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(panel.scenario().model_id, std::string("llama3-8b"));
        QCOMPARE(panel.scenario().model.layers, presets().model("llama3-8b")->layers);
    }

    void tabReachesEveryControl()
    {
        ControlPanel panel(presets());
        echoEdits(panel);
        show(panel, defaultScenario());
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.modelBox()->setFocus();
        QSet<QWidget*> visited;
        for (int i = 0; i < 40; ++i) {
            visited.insert(QApplication::focusWidget());
            QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
        }
        QVERIFY(visited.contains(panel.hardwareBox()));
        QVERIFY(visited.contains(panel.gpusBox()));
        QVERIFY(visited.contains(panel.slider(ControlPanel::Tp)->slider()));
        QVERIFY(visited.contains(panel.slider(ControlPanel::Cp)->slider()));
        // Arrow keys then move the focused slider to the next allowed value.
        panel.slider(ControlPanel::Pp)->slider()->setFocus();
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Right);
        QCOMPARE(panel.scenario().parallel.pp, 8);
    }

    void controlsHaveAccessibleNamesAndTooltips()
    {
        ControlPanel panel(presets());
        echoEdits(panel);
        show(panel, defaultScenario());
        for (QWidget* w : panel.findChildren<QWidget*>()) {
            if (qobject_cast<QSlider*>(w) || qobject_cast<QComboBox*>(w) ||
                qobject_cast<QSpinBox*>(w)) {
                QVERIFY2(!w->accessibleName().isEmpty(), qPrintable(w->objectName()));
                const bool tip = !w->toolTip().isEmpty() ||
                                 (w->parentWidget() && !w->parentWidget()->toolTip().isEmpty());
                QVERIFY2(tip, qPrintable(w->accessibleName()));
            }
        }
    }

    // Megatron's recompute modules have no control of their own: the recompute box says which
    // ones selective repeats, and an impossible list is named on that box.
    void recomputeBoxNamesTheModules()
    {
        ControlPanel panel(presets());
        QComboBox* box = nullptr;
        for (QComboBox* c : panel.findChildren<QComboBox*>())
            if (c->accessibleName().contains(QStringLiteral("ecompute")))
                box = c;
        QVERIFY(box);
        Scenario s = defaultScenario();
        s.training.framework = Framework::Megatron;
        s.training.recompute = Recompute::Selective;
        s.training.recompute_modules = kRecomputeMlaUpProj | kRecomputeMlp;
        show(panel, s);
        QVERIFY2(box->toolTip().contains(QStringLiteral("mla_up_proj, mlp")),
                 qPrintable(box->toolTip()));
        s.training.recompute_modules = 0;
        show(panel, s);
        QVERIFY(box->toolTip().contains(QStringLiteral("nothing")));
        s.training.recompute = Recompute::Full;
        show(panel, s);
        QVERIFY(!box->toolTip().contains(QStringLiteral("Selective recomputes")));
        // Under FSDP selective is torchtitan's per-op policy, which the tooltip spells out.
        s.training.framework = Framework::FSDP;
        s.training.recompute = Recompute::Selective;
        s.training.recompute_modules = kRecomputeCoreAttn;
        show(panel, s);
        QVERIFY2(box->toolTip().contains(QStringLiteral("per-op")), qPrintable(box->toolTip()));
        QVERIFY(!box->toolTip().contains(QStringLiteral("Selective recomputes")));
        s.training.framework = Framework::Megatron;
        s.training.recompute = Recompute::Full;
        // The framework settings list the modules and edit them one by one; the list counts
        // as a setting away from the defaults.
        FrameworkControls* fw = panel.frameworkControls();
        QToolButton* modules = fw->recomputeModulesButton();
        echoEdits(panel);
        s.training.recompute = Recompute::Selective;
        s.training.recompute_modules = kRecomputeCoreAttn;
        show(panel, s);
        QCOMPARE(modules->text(), QStringLiteral("core_attn"));
        QVERIFY(modules->isEnabled());
        QCOMPARE(fw->settingsToggle()->text(), QStringLiteral("Settings: defaults"));
        QSignalSpy edits(&panel, &ControlPanel::edited);
        const QList<QAction*> actions = modules->menu()->actions();
        QCOMPARE(actions.size(), kRecomputeModuleCount);
        actions[3]->trigger(); // mlp
        QCOMPARE(edits.size(), 1);
        const auto edited = edits.takeFirst().at(0).value<Scenario>();
        QCOMPARE(edited.training.recompute_modules,
                 std::uint8_t(kRecomputeCoreAttn | kRecomputeMlp));
        QCOMPARE(modules->text(), QStringLiteral("core_attn, mlp"));
        QCOMPARE(fw->settingsToggle()->text(), QStringLiteral("Settings: 1 set"));
        // Under full recompute the list is not read: greyed, but kept while set.
        s = edited;
        s.training.recompute = Recompute::Full;
        show(panel, s);
        QVERIFY(modules->isEnabled()); // set away from the default, so it can be put back
        s.training.recompute_modules = kRecomputeCoreAttn;
        show(panel, s);
        QVERIFY(!modules->isEnabled());
        // Under torchtitan a list is an impossible plan, named and marked on that control.
        s.training.recompute = Recompute::Selective;
        s.training.recompute_modules = kRecomputeMlp;
        s.training.framework = Framework::FSDP;
        show(panel, s);
        QVERIFY2(panel.bannerText().contains(QStringLiteral("recompute modules")),
                 qPrintable(panel.bannerText()));
        bool marked = false;
        for (QLabel* l : panel.findChildren<QLabel*>())
            marked = marked || (l->buddy() == modules && l->text().startsWith(QStringLiteral("⚠")));
        QVERIFY(marked);
    }

    // Full recompute's layer count sits beside the mode: live under full only, spanning a
    // chunk's layers, edited as training.recompute_num_layers, and dropped when the mode moves
    // away from full (a count there is an impossible plan).
    void recomputeLayersBesideTheMode()
    {
        ControlPanel panel(presets());
        QSpinBox* layers = nullptr;
        QComboBox* mode = nullptr;
        for (QSpinBox* b : panel.findChildren<QSpinBox*>())
            if (b->accessibleName() == QStringLiteral("Recompute layers"))
                layers = b;
        for (QComboBox* c : panel.findChildren<QComboBox*>())
            if (c->accessibleName() == QStringLiteral("Recompute"))
                mode = c;
        QVERIFY(layers && mode);
        Scenario s = defaultScenario(); // llama3-70b (80 layers), PP 4, v 5: chunks of 4
        s.training.recompute = Recompute::Selective;
        show(panel, s);
        QVERIFY(!layers->isEnabled());
        QCOMPARE(layers->text(), QStringLiteral("all layers"));
        s.training.recompute = Recompute::Full;
        show(panel, s);
        QVERIFY(layers->isEnabled());
        QCOMPARE(layers->maximum(), 80 / (s.parallel.pp * s.parallel.virtual_stages));
        echoEdits(panel);
        QSignalSpy edits(&panel, &ControlPanel::edited);
        layers->setValue(2);
        QCOMPARE(edits.size(), 1);
        QCOMPARE(edits.last().at(0).value<Scenario>().training.recompute_num_layers, 2);
        QCOMPARE(edits.last().at(1).toString(), QStringLiteral("training.recompute_num_layers"));
        QCOMPARE(layers->text(), QStringLiteral("2 layers"));
        mode->setCurrentIndex(1); // selective
        emit mode->activated(1);
        const Scenario sel = edits.last().at(0).value<Scenario>();
        QVERIFY(sel.training.recompute == Recompute::Selective);
        QCOMPARE(sel.training.recompute_num_layers, 0);
        QVERIFY(validate(sel).empty());
        QVERIFY(!layers->isEnabled());
    }

    // The framework group shows the scenario's framework settings, asks for a change with the
    // whole scenario, and keeps live only the settings the model reads for the plan.
    void frameworkSettingsAreShownAndEdited()
    {
        ControlPanel panel(presets());
        echoEdits(panel);
        Scenario s = defaultScenario();
        s.training.framework = Framework::Megatron;
        show(panel, s);
        FrameworkControls* fw = panel.frameworkControls();
        QCOMPARE(fw->frameworkBox()->currentText(), QStringLiteral("Megatron-LM"));
        // The settings fold away until asked for; the toggle counts those set off default.
        QCOMPARE(fw->settingsToggle()->text(), QStringLiteral("Settings: defaults"));
        QVERIFY(!fw->settingsToggle()->isChecked());
        QVERIFY(!fw->attentionBox()->isVisibleTo(&panel));
        fw->settingsToggle()->click();
        QVERIFY(fw->attentionBox()->isVisibleTo(&panel));
        // Megatron always fuses its element-wise ops and has no FSDP: those are greyed.
        QVERIFY(!fw->compileBox()->isEnabled());
        QVERIFY(!fw->fsdpVersionBox()->isEnabled());

        QSignalSpy spy(&panel, &ControlPanel::edited);
        fw->frameworkBox()->setCurrentIndex(2);
        emit fw->frameworkBox()->activated(2);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(1).toString(), QStringLiteral("training.framework"));
        Scenario asked = spy.at(0).at(0).value<Scenario>();
        QVERIFY(asked.training.framework == Framework::FSDP);
        QCOMPARE(asked.parallel.tp, s.parallel.tp); // nothing else changed
        QVERIFY(fw->compileBox()->isEnabled());

        // FSDP1 under ZeRO 3: the version box is live and the edit reaches the step time.
        Scenario z = panel.scenario();
        z.parallel.zero = 3;
        show(panel, z);
        QVERIFY(fw->fsdpVersionBox()->isEnabled());
        emit fw->fsdpVersionBox()->activated(1);
        asked = spy.last().at(0).value<Scenario>();
        QCOMPARE(asked.training.fsdp_version, 1);
        QCOMPARE(spy.last().at(1).toString(), QStringLiteral("training.fsdp_version"));
        QVERIFY(evaluate(asked).time.step_seconds != evaluate(z).time.step_seconds);

        // Unfused attention turns flash attention off; a kernel turns it back on.
        emit fw->attentionBox()->activated(4);
        QVERIFY(!panel.scenario().training.flash_attention);
        QCOMPARE(fw->attentionBox()->currentText(), QStringLiteral("unfused (no flash)"));
        emit fw->attentionBox()->activated(3);
        QVERIFY(panel.scenario().training.flash_attention);
        QVERIFY(panel.scenario().training.attention_kernel == AttentionKernel::Triton);

        // A setting made where the model ignores it stays live, so it can be put back.
        Scenario stray = panel.scenario();
        stray.training.framework = Framework::DeepSpeed;
        stray.training.compile = true;
        show(panel, stray);
        QVERIFY(!frameworkOptions(stray).compile);
        QVERIFY(fw->compileBox()->isEnabled());
        QVERIFY(fw->compileBox()->isChecked());
        // Triton attention, FSDP1 and torch.compile: three settings away from the defaults.
        QCOMPARE(fw->settingsToggle()->text(), QStringLiteral("Settings: 3 set"));

        // FP8 parameters: live for Megatron in FP8 only; checking it edits its key.
        auto* fp8Params = qobject_cast<QCheckBox*>(fw->widgetForField("training.fp8_param_gather"));
        QVERIFY(fp8Params);
        Scenario mf = defaultScenario();
        mf.training.framework = Framework::Megatron;
        mf.training.precision = Precision::BF16;
        show(panel, mf);
        QVERIFY(!fp8Params->isEnabled());
        mf.training.precision = Precision::FP8;
        show(panel, mf);
        QVERIFY(fp8Params->isEnabled());
        fp8Params->click();
        QCOMPARE(spy.last().at(1).toString(), QStringLiteral("training.fp8_param_gather"));
        QVERIFY(spy.last().at(0).value<Scenario>().training.fp8_param_gather);
    }

    void offersExactlyThePlanOptionsDegrees()
    {
        // The sliders list planDegrees() and the v box spans its virtual stages, for a dense
        // plan, an MoE plan, a V schedule, one chunk, and a GPU count TP·PP·CP does not divide
        // (a slider also shows its current value when the list lacks it, so it can move away).
        std::vector<Scenario> cases;
        cases.push_back(defaultScenario());
        Scenario moe = defaultScenario();
        moe.model_id = "mixtral-8x7b";
        moe.model = *presets().model("mixtral-8x7b");
        moe.parallel = ParallelPlan{};
        moe.parallel.tp = 4;
        moe.parallel.pp = 2;
        moe.parallel.dp = 8;
        moe.parallel.ep = 4;
        moe.parallel.sequence_parallel = true;
        cases.push_back(moe);
        Scenario vShape = defaultScenario();
        vShape.parallel = withSchedule(vShape.parallel, Schedule::ZBV);
        cases.push_back(vShape);
        Scenario one = defaultScenario();
        one.parallel = withSchedule(one.parallel, Schedule::ZBH1);
        cases.push_back(one);
        Scenario odd = defaultScenario();
        odd.gpus = 48; // 8·4 does not divide it
        cases.push_back(odd);

        ControlPanel panel(presets());
        QSpinBox* vBox = nullptr;
        for (QSpinBox* b : panel.findChildren<QSpinBox*>())
            if (b->accessibleName() == QStringLiteral("Virtual stages"))
                vBox = b;
        QVERIFY(vBox);
        for (const Scenario& s : cases) {
            panel.setScenario(s);
            const PlanDegrees d = planDegrees(s);
            const ParallelPlan& p = s.parallel;
            QCOMPARE(panel.slider(ControlPanel::Tp)->values(), withCurrent(d.tp, p.tp));
            QCOMPARE(panel.slider(ControlPanel::Pp)->values(), withCurrent(d.pp, p.pp));
            QCOMPARE(panel.slider(ControlPanel::Cp)->values(), withCurrent(d.cp, p.cp));
            QCOMPARE(panel.slider(ControlPanel::Dp)->values(), withCurrent(d.dp, p.dp));
            QCOMPARE(panel.slider(ControlPanel::Ep)->values(), withCurrent(d.ep, p.ep));
            QVERIFY(!d.virtual_stages.empty());
            QCOMPARE(vBox->minimum(), d.virtual_stages.front());
            QCOMPARE(vBox->maximum(), d.virtual_stages.back());
            QCOMPARE(vBox->isEnabled(), d.virtual_stages.size() > 1);
        }
        // MoE: EP divides 8 experts and DP·CP = 8; hand-derived, not only equal to the list.
        panel.setScenario(moe);
        QCOMPARE(panel.slider(ControlPanel::Ep)->values(), v({1, 2, 4, 8}));
    }

    void scheduleBoxSwitchesWithWithSchedule()
    {
        // The box lists every schedule in kAllSchedules' order; picking one edits the plan
        // exactly as withSchedule does (interleaved keeps the default's v = 5).
        ControlPanel panel(presets());
        QComboBox* box = nullptr;
        for (QComboBox* b : panel.findChildren<QComboBox*>())
            if (b->accessibleName() == QStringLiteral("Schedule"))
                box = b;
        QVERIFY(box);
        QCOMPARE(box->count(), int(kAllSchedules.size()));
        QSignalSpy spy(&panel, &ControlPanel::edited);
        for (int i = 0; i < box->count(); ++i) {
            const Schedule to = kAllSchedules[std::size_t(i)];
            QCOMPARE(box->itemText(i).toStdString(), std::string(toString(to)));
            for (Schedule from : kAllSchedules) {
                Scenario s = defaultScenario();
                s.parallel = withSchedule(s.parallel, from);
                if (from == Schedule::Interleaved1F1B)
                    s.parallel.virtual_stages = 5;
                panel.setScenario(s);
                emit box->activated(i);
                QVERIFY(spy.last().at(0).value<Scenario>().parallel ==
                        withSchedule(s.parallel, to));
            }
        }
        panel.setScenario(defaultScenario());
        emit box->activated(
            int(std::find(kAllSchedules.begin(), kAllSchedules.end(), Schedule::Interleaved1F1B) -
                kAllSchedules.begin()));
        QCOMPARE(panel.scenario().parallel.virtual_stages, 5);
    }
};

QTEST_MAIN(TestControlPanel)
#include "test_controlpanel.moc"
