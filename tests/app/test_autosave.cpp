// SPDX-License-Identifier: GPL-3.0-or-later
// Autosave and crash recovery, offscreen: unsaved work reaches the disk after a quiet
// interval, goes away when it is saved, undone, discarded or the window closes cleanly, and
// comes back (as a modified document for its original file) after a crash. A real crash is
// simulated by a child process (this test binary re-run with --child) killed with SIGKILL;
// several windows and a live second instance never take each other's autosave.
#include "app/autosave.h"
#include "app/document.h"
#include "app/mainwindow.h"
#include "core/error.h"
#include "core/presets.h"
#include "core/scenario_io.h"
#include "widgets/controlpanel.h"
#include "widgets/snapslider.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <QUndoStack>

#include <csignal>
#include <cstdio>
#include <unistd.h>

using namespace paralens;

namespace {

const PresetLibrary& presets()
{
    return PresetLibrary::builtin();
}

/// The default scenario with one recognisable change.
Scenario edited(int microBatch)
{
    Scenario s = defaultScenario();
    s.training.micro_batch = microBatch;
    s.training.global_batch = 512 * microBatch;
    return s;
}

QStringList filesIn(const QString& dir)
{
    return QDir(dir).entryList(QDir::Files | QDir::Hidden, QDir::Name);
}

/// Child process: `--child DIR MODE MICRO [ORIGINAL]` edits a document, autosaves it into DIR
/// and then, for MODE "crash", dies by SIGKILL (no destructor, no clean-up: a crash), or for
/// "hold" prints "ready" and waits to be killed (a running second instance).
int runChild(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    if (argc < 5)
        return 2;
    const QString dir = QString::fromLocal8Bit(argv[2]);
    const QByteArray mode = argv[3];
    const int micro = QByteArray(argv[4]).toInt();
    Document doc(defaultScenario(), presets());
    if (argc > 5)
        doc.reset(defaultScenario(), QString::fromLocal8Bit(argv[5]));
    Autosave autosave(&doc, presets());
    autosave.setDirectory(dir);
    doc.edit(edited(micro), QStringLiteral("training.micro_batch"));
    if (!autosave.writeNow()) {
        std::fprintf(stderr, "%s\n", qPrintable(autosave.lastError()));
        return 3;
    }
    if (mode == "crash")
        ::kill(::getpid(), SIGKILL);
    std::printf("ready\n");
    std::fflush(stdout);
    for (;;)
        QThread::sleep(1);
}

} // namespace

class TestAutosave : public QObject
{
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_dir;

    QString dir() const { return m_dir->path(); }

    /// Starts this binary as a child; returns when it has written its autosave.
    static bool startChild(QProcess& p, const QString& dir, const char* mode, int micro,
                           const QString& original = QString())
    {
        QStringList args{QStringLiteral("--child"), dir, QString::fromLatin1(mode),
                         QString::number(micro)};
        if (!original.isEmpty())
            args << original;
        p.start(QCoreApplication::applicationFilePath(), args);
        if (!p.waitForStarted(10000))
            return false;
        if (qstrcmp(mode, "crash") == 0)
            return p.waitForFinished(20000) && p.exitStatus() == QProcess::CrashExit;
        return p.waitForReadyRead(20000) && p.readAll().contains("ready");
    }

    /// Leaves the autosave of an edited session that ended without a clean close: the file
    /// stays, its lock goes with the Autosave.
    bool leaveOrphan(int micro) const
    {
        Document doc(defaultScenario(), presets());
        Autosave a(&doc, presets());
        a.setDirectory(dir());
        doc.edit(edited(micro), QStringLiteral("training.micro_batch"));
        return a.writeNow();
    }

    /// Answers the next application-modal message box with `button` once it appears.
    static void answerNextBox(QMessageBox::StandardButton button)
    {
        QTimer::singleShot(0, [button] {
            QElapsedTimer t;
            t.start();
            while (t.elapsed() < 10000) {
                if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
                    box->button(button)->click();
                    return;
                }
                QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
            }
        });
    }

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("ParaLensTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_autosave"));
    }

    void init()
    {
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
    }

    void defaultDirectoryIsAppLocalData()
    {
        QCOMPARE(Autosave::defaultDirectory(),
                 QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) +
                     QStringLiteral("/autosave"));
        Document doc(defaultScenario(), presets());
        Autosave a(&doc, presets());
        QCOMPARE(a.directory(), Autosave::defaultDirectory());
        QCOMPARE(a.intervalMs(), 30000);
        QVERIFY(a.fileName().startsWith(a.directory() + QLatin1Char('/') +
                                        QString::number(QCoreApplication::applicationPid()) +
                                        QLatin1Char('-')));
    }

    void nothingWrittenWhileUnmodified()
    {
        Document doc(defaultScenario(), presets());
        Autosave a(&doc, presets());
        a.setDirectory(dir());
        a.setIntervalMs(10);
        QVERIFY(a.writeNow());
        QTest::qWait(50);
        QVERIFY(filesIn(dir()).isEmpty());
        QVERIFY(!a.isPending());
    }

    void writesAfterQuietInterval()
    {
        Document doc(defaultScenario(), presets());
        doc.reset(defaultScenario(), dir() + QStringLiteral("/mine.paralens.json"));
        Autosave a(&doc, presets());
        a.setDirectory(dir());
        a.setIntervalMs(300);
        QSignalSpy written(&a, &Autosave::written);
        doc.edit(edited(2), QStringLiteral("training.micro_batch"));
        QVERIFY(a.isPending());
        QVERIFY(!QFile::exists(a.fileName())); // not at once: after the quiet interval
        QVERIFY(written.wait(5000));
        QCOMPARE(written.count(), 1);
        QVERIFY(QFile::exists(a.fileName()));
        const AutosaveRecord r = Autosave::readRecord(a.fileName(), presets());
        QCOMPARE(scenarioToText(r.scenario), scenarioToText(edited(2)));
        QCOMPARE(r.originalPath, dir() + QStringLiteral("/mine.paralens.json"));
        QVERIFY(r.savedAt.isValid());
        QVERIFY(qAbs(r.savedAt.secsTo(QDateTime::currentDateTimeUtc())) < 60);
        // Its lock file marks it as owned; the document itself was not touched.
        QCOMPARE(filesIn(dir()).size(), 2);
        QVERIFY(doc.isModified());
        QCOMPARE(doc.filePath(), dir() + QStringLiteral("/mine.paralens.json"));
    }

    /// Edits that keep coming postpone the write, but not beyond twice the interval after the
    /// first unsaved edit.
    void continuousEditingStillSaves()
    {
        Document doc(defaultScenario(), presets());
        Autosave a(&doc, presets());
        a.setDirectory(dir());
        a.setIntervalMs(400);
        QSignalSpy written(&a, &Autosave::written);
        QElapsedTimer t;
        t.start();
        int micro = 1;
        while (written.isEmpty() && t.elapsed() < 10000) {
            doc.edit(edited(1 + (micro++ % 4)), QStringLiteral("training.micro_batch"));
            QTest::qWait(50); // faster than the interval: a plain debounce would never fire
        }
        QVERIFY(!written.isEmpty());
        QVERIFY2(t.elapsed() >= 400, qPrintable(QString::number(t.elapsed())));
        QCOMPARE(scenarioToText(Autosave::readRecord(a.fileName(), presets()).scenario),
                 scenarioToText(doc.scenario()));
    }

    void removedWhenSaved()
    {
        Document doc(defaultScenario(), presets());
        Autosave a(&doc, presets());
        a.setDirectory(dir());
        doc.edit(edited(2), QStringLiteral("training.micro_batch"));
        QVERIFY(a.writeNow());
        QVERIFY(QFile::exists(a.fileName()));
        QString error;
        QTemporaryDir docs;
        QVERIFY(doc.save(docs.filePath(QStringLiteral("saved.paralens.json")), &error));
        QVERIFY(filesIn(dir()).isEmpty()); // the file and its lock
        QVERIFY(!a.isPending());
        // A new edit after the save autosaves again.
        doc.edit(edited(4), QStringLiteral("training.micro_batch"));
        QVERIFY(a.writeNow());
        QCOMPARE(Autosave::readRecord(a.fileName(), presets()).originalPath,
                 docs.filePath(QStringLiteral("saved.paralens.json")));
    }

    void removedWhenUndoneToTheSavedState()
    {
        Document doc(defaultScenario(), presets());
        Autosave a(&doc, presets());
        a.setDirectory(dir());
        doc.edit(edited(2), QStringLiteral("training.micro_batch"));
        QVERIFY(a.writeNow());
        doc.undoStack()->undo();
        QVERIFY(!doc.isModified());
        QVERIFY(filesIn(dir()).isEmpty());
    }

    void removedWhenDiscardedByNew()
    {
        Document doc(defaultScenario(), presets());
        Autosave a(&doc, presets());
        a.setDirectory(dir());
        doc.edit(edited(2), QStringLiteral("training.micro_batch"));
        QVERIFY(a.writeNow());
        doc.reset(defaultScenario()); // File ▸ New after "Discard"
        QVERIFY(filesIn(dir()).isEmpty());
    }

    void removedOnCleanCloseEvenWhenChangesAreDiscarded()
    {
        auto* w = new MainWindow;
        w->setAttribute(Qt::WA_DeleteOnClose, false);
        w->autosave()->setDirectory(dir());
        w->show();
        QTest::keyClick(w->controlPanel()->slider(ControlPanel::Tp)->slider(), Qt::Key_Left);
        QVERIFY(w->document()->isModified());
        QVERIFY(w->autosave()->writeNow());
        QVERIFY(QFile::exists(w->autosave()->fileName()));
        answerNextBox(QMessageBox::Discard); // "Unsaved changes": Discard
        QVERIFY(w->close());
        QVERIFY(filesIn(dir()).isEmpty());
        delete w;

        // Cancel keeps the window open and the autosave in place.
        MainWindow w2;
        w2.autosave()->setDirectory(dir());
        w2.show();
        QTest::keyClick(w2.controlPanel()->slider(ControlPanel::Tp)->slider(), Qt::Key_Left);
        QVERIFY(w2.autosave()->writeNow());
        answerNextBox(QMessageBox::Cancel);
        QVERIFY(!w2.close());
        QVERIFY(QFile::exists(w2.autosave()->fileName()));
    }

    /// A window that goes away without a clean close (here: destroyed; in life: a crash)
    /// leaves its autosave; the next window offers it and restores it as modified work for
    /// the original file.
    void recoveredAfterAnUncleanEnd()
    {
        QTemporaryDir docs;
        const QString original = docs.filePath(QStringLiteral("plan.paralens.json"));
        QString error;
        {
            Document doc(defaultScenario(), presets());
            QVERIFY(doc.save(original, &error));
            Autosave a(&doc, presets());
            a.setDirectory(dir());
            doc.edit(edited(8), QStringLiteral("training.micro_batch"));
            QVERIFY(a.writeNow());
        } // no discard(): the file stays, the lock goes
        QCOMPARE(Autosave::orphans(dir(), presets()).size(), 1);

        MainWindow w;
        w.autosave()->setDirectory(dir());
        QList<AutosaveRecord> asked;
        w.autosave()->setPrompt([&](const AutosaveRecord& r) {
            asked << r;
            return Autosave::Choice::Restore;
        });
        QVERIFY(w.autosave()->offerRecovery(&w));
        QCOMPARE(asked.size(), 1);
        QCOMPARE(asked.first().originalPath, original);
        Document* doc = w.document();
        QCOMPARE(scenarioToText(doc->scenario()), scenarioToText(edited(8)));
        QCOMPARE(doc->filePath(), original);
        QVERIFY(doc->isModified());
        QVERIFY(w.isWindowModified());
        QCOMPARE(doc->undoStack()->count(), 0); // nothing to undo into
        QVERIFY(w.windowTitle().startsWith(QStringLiteral("plan.paralens.json")));
        // The file on disk is untouched until the user saves.
        Document check(defaultScenario(), presets());
        QVERIFY(check.load(original, &error));
        QCOMPARE(scenarioToText(check.scenario()), scenarioToText(defaultScenario()));
        // The old autosave is gone; the restored work is in this window's own autosave.
        QVERIFY(QFile::exists(w.autosave()->fileName()));
        QCOMPARE(scenarioToText(Autosave::readRecord(w.autosave()->fileName(), presets()).scenario),
                 scenarioToText(edited(8)));
        QCOMPARE(filesIn(dir()).size(), 2); // its file and its lock
        QVERIFY(Autosave::orphans(dir(), presets()).isEmpty());
        // Saving ends it all.
        QVERIFY(w.saveFile(original));
        QVERIFY(filesIn(dir()).isEmpty());
        QVERIFY(check.load(original, &error));
        QCOMPARE(scenarioToText(check.scenario()), scenarioToText(edited(8)));
    }

    /// #14: a file named on the command line is open when the recovery prompt comes; Restore
    /// opens the recovered work in a second window and the file stays in the first.
    void restoreBesideTheOpenedFile()
    {
        QVERIFY(leaveOrphan(8)); // an untitled document's work
        QTemporaryDir docs;
        const QString opened = docs.filePath(QStringLiteral("opened.paralens.json"));
        QString error;
        {
            Document doc(defaultScenario(), presets());
            QVERIFY(doc.save(opened, &error));
        }
        MainWindow w;
        w.autosave()->setDirectory(dir());
        QVERIFY(w.openFile(opened));
        w.autosave()->setPrompt([](const AutosaveRecord&) { return Autosave::Choice::Restore; });
        QVERIFY(w.autosave()->offerRecovery(&w));
        QCOMPARE(w.document()->filePath(), opened);
        QVERIFY(!w.document()->isModified());
        QCOMPARE(scenarioToText(w.document()->scenario()), scenarioToText(defaultScenario()));
        MainWindow* other = nullptr;
        for (QWidget* top : QApplication::topLevelWidgets())
            if (top->objectName() == QStringLiteral("RecoveredWindow"))
                other = qobject_cast<MainWindow*>(top);
        QVERIFY(other);
        QVERIFY(other->isVisible());
        QCOMPARE(scenarioToText(other->document()->scenario()), scenarioToText(edited(8)));
        QVERIFY(other->document()->isModified());
        QVERIFY(other->document()->filePath().isEmpty());
        // The work is in the second window's autosave before the old copy went.
        QVERIFY(QFile::exists(other->autosave()->fileName()));
        QVERIFY(Autosave::orphans(dir(), presets()).isEmpty());
        other->autosave()->discard();
        delete other;
    }

    /// A real crash: a child process writes its autosave and is killed. Its lock names a dead
    /// process, so the next start recovers the work.
    void recoveredAfterARealCrash()
    {
        QProcess child;
        QVERIFY(startChild(child, dir(), "crash", 6, dir() + QStringLiteral("/crashed.json")));
        QVERIFY(filesIn(dir()).filter(QStringLiteral(".lock")).size() == 1); // left behind
        MainWindow w;
        w.autosave()->setDirectory(dir());
        int asked = 0;
        w.autosave()->setPrompt([&](const AutosaveRecord& r) {
            ++asked;
            return r.originalPath.endsWith(QStringLiteral("crashed.json"))
                       ? Autosave::Choice::Restore
                       : Autosave::Choice::Later;
        });
        QVERIFY(w.autosave()->offerRecovery());
        QCOMPARE(asked, 1);
        QCOMPARE(scenarioToText(w.document()->scenario()), scenarioToText(edited(6)));
        QCOMPARE(w.document()->filePath(), dir() + QStringLiteral("/crashed.json"));
        QVERIFY(w.document()->isModified());
        // Only this window's autosave and lock remain.
        QCOMPARE(filesIn(dir()).size(), 2);
        QVERIFY(
            filesIn(dir()).join(' ').contains(QString::number(QCoreApplication::applicationPid())));
    }

    /// A running second instance keeps its autosave to itself; once it dies, it is offered.
    void liveInstanceIsNotOffered()
    {
        QProcess other;
        QVERIFY(startChild(other, dir(), "hold", 3));
        MainWindow w;
        w.autosave()->setDirectory(dir());
        int asked = 0;
        w.autosave()->setPrompt([&](const AutosaveRecord&) {
            ++asked;
            return Autosave::Choice::Restore;
        });
        QVERIFY(!w.autosave()->offerRecovery());
        QCOMPARE(asked, 0);
        QVERIFY(Autosave::orphans(dir(), presets()).isEmpty());
        QVERIFY(!w.document()->isModified());

        other.kill();
        QVERIFY(other.waitForFinished(10000));
        QVERIFY(w.autosave()->offerRecovery());
        QCOMPARE(asked, 1);
        QCOMPARE(scenarioToText(w.document()->scenario()), scenarioToText(edited(3)));
    }

    /// Two windows of one process write two files and never touch each other's.
    void windowsDoNotClobberEachOther()
    {
        MainWindow a, b;
        a.autosave()->setDirectory(dir());
        b.autosave()->setDirectory(dir());
        QVERIFY(a.autosave()->fileName() != b.autosave()->fileName());
        a.document()->edit(edited(2), QStringLiteral("training.micro_batch"));
        b.document()->edit(edited(4), QStringLiteral("training.micro_batch"));
        QVERIFY(a.autosave()->writeNow());
        QVERIFY(b.autosave()->writeNow());
        QCOMPARE(filesIn(dir()).size(), 4);
        QCOMPARE(scenarioToText(Autosave::readRecord(a.autosave()->fileName(), presets()).scenario),
                 scenarioToText(edited(2)));
        QCOMPARE(scenarioToText(Autosave::readRecord(b.autosave()->fileName(), presets()).scenario),
                 scenarioToText(edited(4)));
        // A third window starting now finds nothing to recover: both are alive.
        MainWindow c;
        c.autosave()->setDirectory(dir());
        c.autosave()->setPrompt([](const AutosaveRecord&) {
            qFatal("offered a live window's autosave");
            return Autosave::Choice::Discard;
        });
        QVERIFY(!c.autosave()->offerRecovery());
        // Saving one leaves the other.
        QTemporaryDir docs;
        QVERIFY(a.saveFile(docs.filePath(QStringLiteral("a.paralens.json"))));
        QVERIFY(!QFile::exists(a.autosave()->fileName()));
        QVERIFY(QFile::exists(b.autosave()->fileName()));
        QCOMPARE(filesIn(dir()).size(), 2);
    }

    void discardDeletesAndAsksAboutTheNext()
    {
        for (int micro : {2, 4}) {
            QVERIFY(leaveOrphan(micro));
            QTest::qWait(20); // distinct modification times: the newest is asked first
        }
        QCOMPARE(Autosave::orphans(dir(), presets()).size(), 2);
        QCOMPARE(scenarioToText(Autosave::orphans(dir(), presets()).first().scenario),
                 scenarioToText(edited(4)));
        Document doc(defaultScenario(), presets());
        Autosave a(&doc, presets());
        a.setDirectory(dir());
        QList<int> asked;
        a.setPrompt([&](const AutosaveRecord& r) {
            asked << r.scenario.training.micro_batch;
            return Autosave::Choice::Discard;
        });
        QVERIFY(!a.offerRecovery());
        QCOMPARE(asked, (QList<int>{4, 2}));
        QVERIFY(filesIn(dir()).isEmpty());
        QVERIFY(!doc.isModified());
    }

    void laterKeepsTheWork()
    {
        QVERIFY(leaveOrphan(2));
        Document doc(defaultScenario(), presets());
        Autosave a(&doc, presets());
        a.setDirectory(dir());
        a.setPrompt([](const AutosaveRecord&) { return Autosave::Choice::Later; });
        QVERIFY(!a.offerRecovery());
        QVERIFY(!doc.isModified());
        QCOMPARE(Autosave::orphans(dir(), presets()).size(), 1);
    }

    /// The real message box: closing it without an answer keeps the work (Later).
    void messageBoxEscapeKeepsTheWork()
    {
        QVERIFY(leaveOrphan(2));
        MainWindow w;
        w.autosave()->setDirectory(dir());
        QString text;
        QTimer::singleShot(0, [&] {
            QElapsedTimer t;
            t.start();
            while (t.elapsed() < 10000) {
                if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
                    text = box->text();
                    QTest::keyClick(box, Qt::Key_Escape);
                    return;
                }
                QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
            }
        });
        QVERIFY(!w.autosave()->offerRecovery(&w));
        QVERIFY2(text.contains(QStringLiteral("untitled")), qPrintable(text));
        QCOMPARE(Autosave::orphans(dir(), presets()).size(), 1);

        // And its Restore button restores.
        QTimer::singleShot(0, [] {
            QElapsedTimer t;
            t.start();
            while (t.elapsed() < 10000) {
                if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
                    for (QAbstractButton* b : box->buttons())
                        if (b->text().remove(QLatin1Char('&')) == QStringLiteral("Restore"))
                            b->click();
                    return;
                }
                QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
            }
        });
        QVERIFY(w.autosave()->offerRecovery(&w));
        QCOMPARE(scenarioToText(w.document()->scenario()), scenarioToText(edited(2)));
    }

    /// Unreadable autosaves (corrupt, foreign, from a newer version) are not offered, not
    /// deleted, and do not stop a good one from being offered.
    void unreadableAutosavesAreSkipped()
    {
        auto put = [&](const QString& name, const QByteArray& bytes) {
            QFile f(dir() + QLatin1Char('/') + name);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(bytes);
        };
        put(QStringLiteral("1-corrupt.autosave.json"), "{\"paralens_autosave\": 1, \"scen");
        put(QStringLiteral("2-foreign.autosave.json"), "{\"gpus\": 8}");
        put(QStringLiteral("3-newer.autosave.json"),
            "{\"paralens_autosave\": 99, \"scenario\": {}}");
        put(QStringLiteral("4-badplan.autosave.json"),
            "{\"paralens_autosave\": 1, \"scenario\": {\"gpus\": \"x\"}}");
        QVERIFY_THROWS_EXCEPTION(
            InputError,
            Autosave::readRecord(dir() + QStringLiteral("/4-badplan.autosave.json"), presets()));
        QVERIFY(leaveOrphan(2));
        QCOMPARE(Autosave::orphans(dir(), presets()).size(), 1);
        Document doc(defaultScenario(), presets());
        Autosave a(&doc, presets());
        a.setDirectory(dir());
        int asked = 0;
        a.setPrompt([&](const AutosaveRecord&) {
            ++asked;
            return Autosave::Choice::Restore;
        });
        QVERIFY(a.offerRecovery());
        QCOMPARE(asked, 1);
        QCOMPARE(scenarioToText(doc.scenario()), scenarioToText(edited(2)));
        QCOMPARE(filesIn(dir()).filter(QStringLiteral("autosave.json")).size(), 5); // 4 + own
    }

    /// Nothing is offered over work the window already has.
    void noOfferOverUnsavedWork()
    {
        QVERIFY(leaveOrphan(2));
        Document doc(defaultScenario(), presets());
        Autosave a(&doc, presets());
        a.setDirectory(dir());
        doc.edit(edited(4), QStringLiteral("training.micro_batch"));
        a.setPrompt([](const AutosaveRecord&) {
            qFatal("offered over unsaved work");
            return Autosave::Choice::Restore;
        });
        QVERIFY(!a.offerRecovery());
        QCOMPARE(scenarioToText(doc.scenario()), scenarioToText(edited(4)));
    }

    void unwritableFolderIsReportedNotFatal()
    {
        Document doc(defaultScenario(), presets());
        Autosave a(&doc, presets());
        QFile blocker(dir() + QStringLiteral("/file"));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        a.setDirectory(dir() + QStringLiteral("/file/autosave")); // under a plain file
        doc.edit(edited(2), QStringLiteral("training.micro_batch"));
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("^autosave: ")));
        QVERIFY(!a.writeNow());
        QVERIFY(a.lastError().contains(QStringLiteral("file/autosave")));
        QVERIFY(doc.isModified());
        QCOMPARE(scenarioToText(doc.scenario()), scenarioToText(edited(2)));
    }
};

int main(int argc, char** argv)
{
    if (argc > 1 && qstrcmp(argv[1], "--child") == 0)
        return runChild(argc, argv);
    QApplication app(argc, argv);
    TestAutosave test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_autosave.moc"
