// SPDX-License-Identifier: GPL-3.0-or-later
// The explorer window under abuse, offscreen: thousands of random control changes (seeded,
// reproducible) interleaved with undo/redo and schedule switches never crash it and never put
// NaN/inf on screen; corrupt, truncated, huge, binary and non-regular files are refused with
// an error while the current document stays exactly as it was.
//
// PARALENS_GUI_SEED=N and PARALENS_GUI_STEPS=N replay or lengthen the random run.
#include "app/document.h"
#include "app/mainwindow.h"
#include "core/presets.h"
#include "core/scenario_io.h"
#include "widgets/breakdownview.h"
#include "widgets/controlpanel.h"
#include "widgets/ganttview.h"
#include "widgets/headline.h"
#include "widgets/memoryview.h"
#include "widgets/snapslider.h"
#include "widgets/topologyview.h"

#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <qcustomplot.h>

#include <sys/stat.h>

#include <cmath>
#include <random>

using namespace paralens;

namespace {

/// "nan", "inf", "infinity" as words, in any case (how printf and QString::number show them).
bool showsNonFinite(const QString& text)
{
    static const QRegularExpression re(QStringLiteral("\\b(-?nan|-?inf|-?infinity)\\b"),
                                       QRegularExpression::CaseInsensitiveOption);
    return re.match(text).hasMatch();
}

/// The document as it is: scenario text, file, history and modified flag.
struct DocState
{
    std::string scenario;
    QString path;
    int undoCount = 0;
    int undoIndex = 0;
    bool modified = false;

    static DocState of(const Document& d)
    {
        return {scenarioToText(d.scenario()), d.filePath(), d.undoStack()->count(),
                d.undoStack()->index(), d.isModified()};
    }
    bool operator==(const DocState&) const = default;
};

} // namespace

class TestGuiRobustness : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;

    static bool settle(MainWindow& w)
    {
        return QTest::qWaitFor(
            [&] {
                return !w.evaluator()->isBusy() &&
                       w.shown().generation == w.evaluator()->generation();
            },
            20000);
    }

    /// Every number the window shows is finite, and it shows either an estimate or the
    /// reason there is none. Returns a description of the first problem ("" when none).
    static QString checkWindow(MainWindow& w)
    {
        const Evaluation& e = w.shown();
        if (scenarioToText(e.scenario) != scenarioToText(w.document()->scenario()))
            return QStringLiteral("the views show another scenario than the document's");
        if (!e.failure.isEmpty())
            return QStringLiteral("the core threw: ") + e.failure;
        for (QLabel* label : w.findChildren<QLabel*>())
            if (showsNonFinite(label->text()) || showsNonFinite(label->toolTip()))
                return QStringLiteral("label shows a non-finite number: ") + label->text() +
                       QLatin1Char(' ') + label->toolTip();
        if (showsNonFinite(w.windowTitle()))
            return QStringLiteral("title: ") + w.windowTitle();
        for (ChartView* c : w.charts()) {
            QCustomPlot* p = c->plot();
            for (QCPAxis* axis : p->axisRect()->axes()) {
                const QCPRange r = axis->range();
                if (!std::isfinite(r.lower) || !std::isfinite(r.upper) || r.lower > r.upper)
                    return QStringLiteral("%1: axis range [%2, %3]")
                        .arg(c->chartId())
                        .arg(r.lower)
                        .arg(r.upper);
            }
            for (int i = 0; i < p->itemCount(); ++i)
                if (auto* t = qobject_cast<QCPItemText*>(p->item(i));
                    t && showsNonFinite(t->text()))
                    return QStringLiteral("%1: text item '%2'").arg(c->chartId(), t->text());
        }
        const QString fits = w.headline()->valueText(Headline::Fits);
        if (!e.ok()) {
            if (e.reason().trimmed().isEmpty())
                return QStringLiteral("invalid plan without a reason");
            if (fits != QStringLiteral("invalid plan"))
                return QStringLiteral("invalid plan, but the headline says ") + fits;
            for (ChartView* c : w.charts())
                if (!c->isInvalid() || c->invalidReason() != e.reason())
                    return c->chartId() + QStringLiteral(" does not show the invalid reason");
            if (w.controlPanel()->bannerText().isEmpty() && !e.errors.empty())
                return QStringLiteral("invalid plan without the panel's banner");
            return {};
        }
        if (!fits.contains(QStringLiteral("fits")) && !fits.contains(QStringLiteral("OOM")))
            return QStringLiteral("valid plan, but the headline says ") + fits;
        for (int f = 0; f < Headline::Fits; ++f)
            if (w.headline()->valueText(Headline::Figure(f)) == QStringLiteral("—"))
                return QStringLiteral("valid plan with a dash for ") +
                       Headline::figureName(Headline::Figure(f));
        // A valid plan above the simulator's op limit (docs/limits.md) has no timeline: the
        // Gantt alone is greyed then, and says why.
        const bool simulated = e.timeline && e.timeline->simulated;
        for (ChartView* c : w.charts()) {
            if (!c->isInvalid())
                continue;
            if (c == w.ganttView() && !simulated) {
                if (c->invalidReason().isEmpty())
                    return QStringLiteral("gantt greyed without a reason");
                continue;
            }
            return c->chartId() + QStringLiteral(" still greyed for a valid plan");
        }
        const MemoryView* mem = w.memoryView();
        if (mem->stageCount() < 1 || !std::isfinite(mem->capacityGiB()) || mem->capacityGiB() <= 0)
            return QStringLiteral("memory view: %1 stages, capacity %2 GiB")
                .arg(mem->stageCount())
                .arg(mem->capacityGiB());
        for (int s = 0; s < mem->stageCount(); ++s)
            for (int part = 0; part < MemoryView::PartCount; ++part) {
                const double v = mem->segmentGiB(MemoryView::Part(part), s);
                if (!std::isfinite(v) || v < 0)
                    return QStringLiteral("memory view: %1 of stage %2 is %3 GiB")
                        .arg(MemoryView::partName(MemoryView::Part(part)))
                        .arg(s)
                        .arg(v);
            }
        const BreakdownView* bd = w.breakdownView();
        if (!std::isfinite(bd->axisUnitSeconds()) || bd->axisUnitSeconds() <= 0)
            return QStringLiteral("breakdown unit %1").arg(bd->axisUnitSeconds());
        for (int s = 0; s < BreakdownView::SegmentCount; ++s) {
            const double v = bd->segmentSeconds(BreakdownView::Segment(s));
            if (!std::isfinite(v) || v < 0)
                return QStringLiteral("breakdown: %1 is %2 s")
                    .arg(BreakdownView::segmentName(BreakdownView::Segment(s)))
                    .arg(v);
        }
        if (w.topologyView()->groupCount() < 1)
            return QStringLiteral("topology view without groups");
        return {};
    }

    static QSpinBox* findSpin(QWidget* panel, const char* name)
    {
        for (QSpinBox* b : panel->findChildren<QSpinBox*>())
            if (b->accessibleName() == QLatin1String(name))
                return b;
        return nullptr;
    }

    /// A value a user might type or scroll to in `box`: half the time a value planners use
    /// (whole nodes, powers of two, a batch that divides evenly), else nearby steps, doubling
    /// and halving, anything in the range (log-uniform) and, rarely, the extremes.
    static int spinTarget(const QSpinBox* box, const Scenario& s, std::mt19937& rng)
    {
        const int lo = box->minimum(), hi = box->maximum(), v = box->value();
        auto roll = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(rng); };
        const QString name = box->accessibleName();
        long long t = v;
        if (roll(0, 1) == 0) {
            if (name == QStringLiteral("GPUs"))
                t = (1LL << roll(0, 12)) * (roll(0, 3) == 0 ? 3 : 1) * s.cluster.gpus_per_node;
            else if (name == QStringLiteral("Global batch"))
                t = (1LL << roll(0, 6)) * s.training.micro_batch * s.parallel.dp;
            else if (name == QStringLiteral("Sequence length"))
                t = 1LL << roll(10, 17);
            else
                t = 1LL << roll(0, 3);
            return int(std::clamp<long long>(t, lo, hi));
        }
        const int pick = roll(0, 99);
        if (pick < 30)
            t = v + roll(-3, 3) * box->singleStep();
        else if (pick < 60)
            t = pick < 45 ? 2LL * v : v / 2;
        else if (pick < 94) {
            const double a = std::log(double(lo)), b = std::log(double(hi));
            t = std::llround(std::exp(std::uniform_real_distribution<double>(a, b)(rng)));
        } else
            t = pick < 97 ? lo : hi;
        return int(std::clamp<long long>(t, lo, hi));
    }

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("ParaLensTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_gui_robustness"));
        QVERIFY(m_dir.isValid());
    }

    void randomControlChangesShowNoNonFiniteNumbers()
    {
        const unsigned seed = qEnvironmentVariableIsSet("PARALENS_GUI_SEED")
                                  ? qEnvironmentVariableIntValue("PARALENS_GUI_SEED")
                                  : 20261129u;
        const int steps = qEnvironmentVariableIsSet("PARALENS_GUI_STEPS")
                              ? qEnvironmentVariableIntValue("PARALENS_GUI_STEPS")
                              : 3000;
        constexpr int kCheckEvery = 25;
        std::mt19937 rng(seed);
        auto roll = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };

        MainWindow w;
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(settle(w));
        ControlPanel* panel = w.controlPanel();
        QUndoStack* undo = w.document()->undoStack();
        const QList<QComboBox*> combos = panel->findChildren<QComboBox*>();
        const QList<QSpinBox*> spins = panel->findChildren<QSpinBox*>();
        const QList<QCheckBox*> checks = panel->findChildren<QCheckBox*>();
        QComboBox* schedule = nullptr;
        for (QComboBox* c : combos)
            if (c->findText(QStringLiteral("1f1b")) >= 0 || c->count() == 6)
                schedule = c;
        QVERIFY(schedule);
        const int globalBatch = int(spins.indexOf(findSpin(panel, "Global batch")));
        const int gpusBox = int(spins.indexOf(panel->gpusBox()));
        QVERIFY(globalBatch >= 0);
        QVERIFY(gpusBox >= 0);
        // model, hardware, schedule, ZeRO, recompute, precision; framework, attention, FP8
        // recipe, gradient dtype, Adam moments, FSDP version, backward prefetch, reshard after
        // forward
        QCOMPARE(combos.size(), 14);
        // GPUs, virtual stages, recompute layers, micro-batch, global batch, seq len
        QCOMPARE(spins.size(), 6);
        // sequence parallel; FP8 parameters, TP comm overlap, DP reduce overlap, torch.compile
        QCOMPARE(checks.size(), 5);

        const int sliderKeys[] = {Qt::Key_Left, Qt::Key_Right,  Qt::Key_Home,
                                  Qt::Key_End,  Qt::Key_PageUp, Qt::Key_PageDown};
        int checked = 0, valid = 0, invalid = 0, edits = 0, undos = 0, redos = 0, switches = 0;
        QElapsedTimer clock;
        clock.start();
        for (int step = 1; step <= steps; ++step) {
            const int what = roll(100);
            QString action;
            if (what < 12) { // undo, sometimes several steps at once
                for (int n = 1 + roll(3); n > 0 && undo->canUndo(); --n)
                    undo->undo();
                ++undos;
                action = QStringLiteral("undo");
            } else if (what < 18) {
                if (undo->canRedo())
                    undo->redo();
                ++redos;
                action = QStringLiteral("redo");
            } else if (what < 28) { // a schedule switch as the user picks it
                const int i = roll(schedule->count());
                schedule->setCurrentIndex(i);
                emit schedule->activated(i);
                ++switches;
                action = QStringLiteral("schedule %1").arg(schedule->itemText(i));
            } else if (what < 38) { // the user follows the banner: whole nodes, a batch that fits
                const Scenario& sc = w.document()->scenario();
                const int perNode = sc.cluster.gpus_per_node;
                if (sc.gpus > perNode && sc.gpus % perNode != 0)
                    spins.at(gpusBox)->setValue((sc.gpus / perNode + 1) * perNode);
                QSpinBox* b = spins.at(globalBatch);
                b->setValue(int(std::min<long long>(
                    b->maximum(), (1LL << roll(4)) * sc.training.micro_batch * sc.parallel.dp)));
                action = QStringLiteral("fix nodes and global batch");
            } else if (what < 60) { // a parallel-degree slider, by keyboard like a user
                SnapSlider* s =
                    panel->slider(ControlPanel::Dimension(roll(ControlPanel::DimensionCount)));
                const int key = sliderKeys[roll(6)];
                QTest::keyClick(s->slider(), Qt::Key(key));
                action = QStringLiteral("slider key %1").arg(key);
            } else if (what < 75) {
                QComboBox* c = combos.at(roll(int(combos.size())));
                const int i = roll(c->count());
                if (c->isEnabled()) {
                    c->setCurrentIndex(i);
                    emit c->activated(i);
                }
                action = QStringLiteral("combo %1 = %2").arg(c->accessibleName(), c->itemText(i));
            } else if (what < 95) {
                QSpinBox* b = spins.at(roll(int(spins.size())));
                const int v = spinTarget(b, w.document()->scenario(), rng);
                if (b->isEnabled())
                    b->setValue(v);
                action = QStringLiteral("spin %1 = %2").arg(b->accessibleName()).arg(v);
            } else {
                QCheckBox* c = checks.at(roll(int(checks.size())));
                c->click(); // does nothing while disabled, like a real click
                action = QStringLiteral("check %1").arg(c->accessibleName());
            }
            ++edits;
            if (step % 7 == 0)
                QCoreApplication::processEvents(); // let some results arrive mid-run
            if (step % kCheckEvery != 0)
                continue;
            QVERIFY2(settle(w), qPrintable(QStringLiteral("seed %1 step %2: evaluator never "
                                                          "settled")
                                               .arg(seed)
                                               .arg(step)));
            const QString problem = checkWindow(w);
            QVERIFY2(problem.isEmpty(),
                     qPrintable(QStringLiteral("seed %1 step %2 (after %3): %4\n%5")
                                    .arg(seed)
                                    .arg(step)
                                    .arg(action, problem,
                                         QString::fromStdString(
                                             scenarioToText(w.document()->scenario())))));
            ++checked;
            (w.shown().ok() ? valid : invalid) += 1;
            if (!w.shown().ok() && qEnvironmentVariableIsSet("PARALENS_GUI_VERBOSE"))
                qInfo("%s", qPrintable(w.shown().reason()));
        }
        qInfo("seed %u: %d actions (%d undo, %d redo, %d schedule switches), %d checks "
              "(%d valid plans, %d invalid), %lld ms",
              seed, edits, undos, redos, switches, checked, valid, invalid,
              (long long)clock.elapsed());
        // The run must have seen both kinds of state, or it tested little.
        QVERIFY(valid > 0);
        QVERIFY(invalid > 0);
        QVERIFY(undo->count() > 0);

        // Undo everything: back to the document the window started with, clean again.
        undo->setIndex(0);
        QVERIFY(settle(w));
        QCOMPARE(scenarioToText(w.document()->scenario()), scenarioToText(defaultScenario()));
        QVERIFY(!w.document()->isModified());
        QCOMPARE(checkWindow(w), QString());
        QVERIFY(w.shown().ok());
    }

    /// A burst of edits faster than the evaluations does not queue one evaluation per edit:
    /// the window shows the newest plan after about two evaluations, not a thousand.
    void burstOfEditsEvaluatesOnlyTheNewest()
    {
        MainWindow w;
        w.show();
        QVERIFY(settle(w));
        const quint64 before = w.evaluator()->startedCount();
        Scenario s = w.document()->scenario();
        for (int i = 1; i <= 1000; ++i) {
            s.training.global_batch = 64 * (1 + i % 16);
            w.document()->edit(s, QStringLiteral("training.global_batch"));
        }
        QVERIFY(settle(w));
        const quint64 started = w.evaluator()->startedCount() - before;
        QVERIFY2(started <= 3, qPrintable(QString::number(started)));
        QCOMPARE(scenarioToText(w.shown().scenario), scenarioToText(s));
        QVERIFY(w.shown().ok());
        QCOMPARE(checkWindow(w), QString());
    }

    // ---- hostile files: an error names the problem; the document stays as it was ----

    void hostileFiles_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("expected"); // part of the error message
        const QByteArray valid = QByteArray::fromStdString(scenarioToText(defaultScenario()));
        QTest::newRow("not JSON") << QByteArray("this is not a scenario\n") << "malformed JSON";
        QTest::newRow("empty") << QByteArray() << "malformed JSON";
        QTest::newRow("unclosed") << QByteArray("{\"gpus\": 64, \"parallel\": {\"tp\": ")
                                  << "malformed JSON";
        QTest::newRow("wrong type") << QByteArray("{\"gpus\": \"many\"}") << "gpus";
        QTest::newRow("array") << QByteArray("[1, 2, 3]") << "object";
        QTest::newRow("unknown preset") << QByteArray("{\"model\": \"gpt-17\"}") << "gpt-17";
        QTest::newRow("negative") << QByteArray("{\"gpus\": -8}") << "gpus";
        QTest::newRow("huge number") << QByteArray("{\"gpus\": 1e400}") << "number overflow";
        QTest::newRow("NaN literal") << QByteArray("{\"gpus\": NaN}") << "malformed JSON";
        QTest::newRow("duplicate key") << QByteArray("{\"gpus\": 8, \"gpus\": 16}") << "duplicate";
        QTest::newRow("deep nesting") << QByteArray(200000, '[') << "malformed JSON";
        QTest::newRow("deep nesting closed")
            << QByteArray(100000, '[') + QByteArray(100000, ']') << "object";
        QByteArray nul = valid;
        nul.insert(nul.indexOf("llama3-70b") + 3, '\0');
        QTest::newRow("NUL in a string") << nul << "";
        QByteArray badUtf8 = valid;
        badUtf8.replace("llama3-70b", "llama\xff\xfe");
        QTest::newRow("invalid UTF-8") << badUtf8 << "";
        QByteArray utf16("\xff\xfe");
        for (char c : valid) {
            utf16.append(c);
            utf16.append('\0');
        }
        QTest::newRow("UTF-16") << utf16 << "malformed JSON";
        std::mt19937 rng(7);
        QByteArray noise(65536, '\0');
        for (char& c : noise)
            c = char(rng());
        QTest::newRow("random bytes") << noise << "";
        QByteArray png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
        png += QByteArray(4096, '\x7f');
        QTest::newRow("PNG") << png << "malformed JSON";
        QTest::newRow("just over the size limit")
            << valid + QByteArray(int(Document::kMaxFileBytes) - int(valid.size()) + 1, ' ')
            << "limit of 1 MiB";
    }

    void hostileFiles()
    {
        QFETCH(QByteArray, content);
        QFETCH(QString, expected);
        const QString path = m_dir.filePath(QStringLiteral("hostile.paralens.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        QCOMPARE(f.write(content), qint64(content.size()));
        f.close();
        verifyRefused(path, expected);
    }

    /// Every prefix of a valid file that cuts the JSON is refused.
    void truncatedFiles()
    {
        const QByteArray valid = QByteArray::fromStdString(scenarioToText(defaultScenario()));
        const int end = int(valid.lastIndexOf('}'));
        QVERIFY(end > 100);
        MainWindow w;
        const DocState before = editedState(w);
        const QString path = m_dir.filePath(QStringLiteral("cut.paralens.json"));
        int refused = 0;
        for (int n = 0; n <= end; n += 1 + n / 16) {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write(valid.left(n));
            f.close();
            QString error;
            QVERIFY2(!w.document()->load(path, &error), qPrintable(QString::number(n)));
            QVERIFY2(!error.isEmpty(), qPrintable(QString::number(n)));
            QCOMPARE(DocState::of(*w.document()), before);
            ++refused;
        }
        QVERIFY(refused > 50);
        // The whole file (and one with whitespace up to the limit) still loads.
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(valid + QByteArray(int(Document::kMaxFileBytes) - int(valid.size()), '\n'));
        f.close();
        QCOMPARE(QFileInfo(path).size(), Document::kMaxFileBytes);
        QString error;
        QVERIFY2(w.document()->load(path, &error), qPrintable(error));
        QCOMPARE(scenarioToText(w.document()->scenario()), scenarioToText(defaultScenario()));
    }

    /// A 100 MB file is refused by its size before it is read: quickly, without the GUI
    /// thread reading 100 MB.
    void hugeFileRefusedQuickly()
    {
        const QString path = m_dir.filePath(QStringLiteral("huge.paralens.json"));
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            QByteArray head("{\"gpus\": 64, \"padding\": \"");
            f.write(head);
            QVERIFY(f.resize(100LL * 1000 * 1000)); // sparse: zeros after the head
        }
        QCOMPARE(QFileInfo(path).size(), 100LL * 1000 * 1000);
        QElapsedTimer clock;
        clock.start();
        verifyRefused(path, QStringLiteral("100000000 bytes, above the limit of 1 MiB"));
        // Generous for a loaded machine; reading and parsing 100 MB takes far longer.
        QVERIFY2(clock.elapsed() < 2000, qPrintable(QString::number(clock.elapsed())));
    }

    void notARegularFile_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("expected");
        QTest::newRow("folder") << m_dir.path() << "folder";
        QTest::newRow("missing") << m_dir.filePath(QStringLiteral("nowhere.paralens.json"))
                                 << "cannot open";
        QTest::newRow("/dev/zero (endless)") << "/dev/zero"
                                             << "not a regular file";
        const QString fifo = m_dir.filePath(QStringLiteral("pipe.paralens.json"));
        QVERIFY(::mkfifo(QFile::encodeName(fifo).constData(), 0600) == 0 || QFile::exists(fifo));
        QTest::newRow("FIFO (would block)") << fifo << "not a regular file";
    }

    void notARegularFile()
    {
        QFETCH(QString, path);
        QFETCH(QString, expected);
        QElapsedTimer clock;
        clock.start();
        verifyRefused(path, expected);
        QVERIFY2(clock.elapsed() < 2000, qPrintable(QString::number(clock.elapsed())));
    }

private:
    /// A window whose document has been edited and saved once, then edited again, so that
    /// path, history and the modified flag all have values a failed open could disturb.
    DocState editedState(MainWindow& w)
    {
        const QString saved = m_dir.filePath(QStringLiteral("current.paralens.json"));
        QTest::keyClick(w.controlPanel()->slider(ControlPanel::Tp)->slider(), Qt::Key_Left);
        QString error;
        if (!w.document()->save(saved, &error))
            qFatal("%s", qPrintable(error));
        QTest::keyClick(w.controlPanel()->slider(ControlPanel::Pp)->slider(), Qt::Key_Right);
        QTest::keyClick(w.controlPanel()->slider(ControlPanel::Tp)->slider(), Qt::Key_Left);
        w.document()->undoStack()->undo();
        return DocState::of(*w.document());
    }

    /// Opening `path` through the window and through the document fails with an error that
    /// contains `expected` and names the file; nothing about the document changes.
    void verifyRefused(const QString& path, const QString& expected)
    {
        MainWindow w;
        w.show();
        const DocState before = editedState(w);
        QVERIFY(before.modified);
        QVERIFY(before.undoIndex < before.undoCount); // a redo step exists
        QSignalSpy errors(&w, &MainWindow::errorShown);
        QVERIFY(!w.openFile(path));
        QCOMPARE(errors.count(), 1);
        const QString message = errors.at(0).at(0).toString();
        QVERIFY2(message.contains(QFileInfo(path).fileName()), qPrintable(message));
        QVERIFY2(message.contains(expected), qPrintable(message));
        QVERIFY2(!showsNonFinite(message) || expected.isEmpty(), qPrintable(message));
        QVERIFY2(message.size() < 2000, "the error must be a message, not the file");
        auto* box = w.findChild<QMessageBox*>(QStringLiteral("ErrorBox"));
        QVERIFY(box && box->isVisible());
        box->close();
        QCOMPARE(DocState::of(*w.document()), before);
        QVERIFY(w.isWindowModified());

        QString error;
        QVERIFY(!w.document()->load(path, &error));
        QCOMPARE(error, message);
        QCOMPARE(DocState::of(*w.document()), before);
        QVERIFY(settle(w));
        QCOMPARE(checkWindow(w), QString());
    }
};

QTEST_MAIN(TestGuiRobustness)
#include "test_gui_robustness.moc"
