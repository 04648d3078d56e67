// SPDX-License-Identifier: GPL-3.0-or-later
// The fit advice panel shows the core's adviseFit() (computed off the GUI thread) and hands a
// suggestion back with one click on its Apply button.
#include "core/fit_advice.h"
#include "core/presets.h"
#include "widgets/fitadviceview.h"
#include "widgets/units.h"

#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>

using namespace paralens;

namespace {

Scenario llama70b(int tp, int pp, int zero)
{
    const PresetLibrary& lib = PresetLibrary::builtin();
    Scenario s;
    s.model_id = "llama3-70b";
    s.model = *lib.model("llama3-70b");
    s.hardware_id = "h100-sxm";
    s.cluster = *lib.hardware("h100-sxm");
    s.gpus = 64;
    s.parallel.tp = tp;
    s.parallel.pp = pp;
    s.parallel.dp = 64 / (tp * pp);
    s.parallel.sequence_parallel = tp > 1;
    s.parallel.zero = zero;
    s.training.global_batch = 512;
    s.training.seq_len = 4096;
    return s;
}

bool waitReady(FitAdviceView& v)
{
    return QTest::qWaitFor([&] { return !v.isComputing(); }, 60000);
}

} // namespace

class TestFitAdviceView : public QObject
{
    Q_OBJECT
private slots:
    /// A burst of edits (a dragged slider) runs one search, for the last plan, once they pause.
    void editsInABurstSearchOnce()
    {
        FitAdviceView view;
        view.show();
        QSignalSpy ready(&view, &FitAdviceView::adviceReady);
        for (int tp : {1, 2, 4, 8}) {
            view.setScenario(llama70b(tp, 1, 0));
            QVERIFY(view.isPending() && view.isComputing());
        }
        QVERIFY(waitReady(view));
        QVERIFY(!view.isPending());
        QCOMPARE(ready.count(), 1);
        QCOMPARE(view.advice().peak_bytes, adviseFit(llama70b(8, 1, 0)).peak_bytes);
        view.setScenario(llama70b(8, 1, 0), false); // hidden: nothing waits
        QVERIFY(!view.isComputing());
    }

    void showsWhyAndWhatWouldFit()
    {
        FitAdviceView view;
        view.resize(420, 600);
        view.show();
        QSignalSpy ready(&view, &FitAdviceView::adviceReady);
        const Scenario s = llama70b(1, 1, 0); // data parallel only: ~1.3 TB per GPU
        view.setScenario(s);
        QVERIFY(waitReady(view));
        QCOMPARE(ready.count(), 1);
        const FitAdvice core = adviseFit(s);
        QVERIFY(!core.fits && !core.suggestions.empty());
        QVERIFY(view.headlineText().startsWith(QStringLiteral("Does not fit")));
        QVERIFY(view.headlineText().contains(units::bytes(core.peak_bytes)));
        const QStringList terms = view.termsText().split(QLatin1Char('\n'));
        QCOMPARE(terms.size(), 4); // a title and the three largest terms
        QVERIFY(terms[1].contains(QStringLiteral("optimizer states")));
        QVERIFY(terms[1].contains(units::bytes(core.terms[0].bytes)));
        QVERIFY(terms[1].contains(units::percent(core.terms[0].share)));
        QCOMPARE(view.table()->rowCount(), int(core.suggestions.size()));
        QVERIFY(view.table()->isVisible());
        for (int row = 0; row < view.table()->rowCount(); ++row) {
            const FitSuggestion& f = core.suggestions[std::size_t(row)];
            QCOMPARE(view.table()->item(row, 0)->text(),
                     QLocale().toString(f.tokens_per_second, 'f', 0));
            QCOMPARE(view.table()->item(row, 2)->text(), QString::fromStdString(f.summary));
        }
        QSignalSpy chosen(&view, &FitAdviceView::suggestionChosen);
        QPushButton* apply = view.applyButton(1);
        QVERIFY(apply);
        QTest::mouseClick(apply, Qt::LeftButton);
        QCOMPARE(chosen.count(), 1);
        const auto got = chosen.at(0).at(0).value<Scenario>();
        QCOMPARE(got.parallel.tp, core.suggestions[1].scenario.parallel.tp);
        QCOMPARE(got.parallel.pp, core.suggestions[1].scenario.parallel.pp);
        QCOMPARE(got.parallel.zero, core.suggestions[1].scenario.parallel.zero);
        QVERIFY(got.training.recompute == core.suggestions[1].scenario.training.recompute);
    }

    void aPlanThatFitsShowsNoList()
    {
        FitAdviceView view;
        view.show();
        view.setScenario(llama70b(8, 4, 1));
        QVERIFY(waitReady(view));
        QVERIFY(view.advice().fits);
        QVERIFY(view.headlineText().startsWith(QStringLiteral("The plan fits")));
        QVERIFY(!view.table()->isVisible());
        QCOMPARE(view.table()->rowCount(), 0);
    }

    void aPlanThatCannotRunSaysSo()
    {
        FitAdviceView view;
        Scenario s = llama70b(1, 1, 0);
        s.parallel.dp = 63; // tp·pp·dp is not the GPU count
        view.setScenario(s);
        QVERIFY(waitReady(view));
        QVERIFY(!view.advice().runnable);
        QVERIFY(view.headlineText().contains(QStringLiteral("cannot run")));
    }
};

QTEST_MAIN(TestFitAdviceView)
#include "test_fitadviceview.moc"
