// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli_commands.h"
#include "app/tour_handout.h"
#include "core/error.h"
#include "core/tour.h"
#include "core/tour_caption.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QGuiApplication>
#include <QTextStream>

namespace paralens::cli {
namespace {

/// A file path, or the id of a bundled tour (paralens tour --list) when no such file exists.
Tour loadTour(const QString& arg)
{
    if (!QFileInfo::exists(arg))
        for (const BundledTour& b : bundledTours())
            if (arg == QString::fromStdString(b.id))
                return parseTour(b.text, b.id + ".paralens-tour.json", presets());
    return loadTourFile(arg.toStdString(), presets());
}

QString figures(const TourStep& step, const TourStepResult& r)
{
    const tour::StepFigures f{&step.scenario, &r.estimate};
    auto t = [&](const char* name) { return QString::fromStdString(tour::figureText(name, f)); };
    return QStringLiteral("peak %1 of %2 (%3), step %4, %5 tokens/s, MFU %6, bubble %7")
        .arg(t("peak_gib"), t("capacity_gib"), t("fits"), t("step_s"), t("tokens_per_s"), t("mfu"),
             t("bubble"));
}

QString stepLabel(const Tour& tour, std::size_t i)
{
    return QStringLiteral("step %1 ('%2')")
        .arg(i + 1)
        .arg(QString::fromStdString(tour.steps[i].title));
}

int list(QTextStream& out)
{
    for (const BundledTour& b : bundledTours()) {
        QString title;
        try {
            title = QString::fromStdString(parseTour(b.text, b.id, presets()).title);
        } catch (const InputError& e) {
            title = QStringLiteral("(does not load: %1)").arg(e.what());
        }
        out << QString::fromStdString(b.id).leftJustified(28) << title << "\n";
    }
    return Ok;
}

} // namespace

// paralens tour FILE|ID [--check] [--export DIR [--page-images]]; paralens tour --list
int cmdTour(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Run a guided tour (docs/tour-format.md) on the live model: print each "
                       "step's caption and figures, check its expect bounds, or write a "
                       "handout."));
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("tour"),
                                 QStringLiteral("TOUR.paralens-tour.json, or a bundled tour id"));
    const QCommandLineOption check(QStringLiteral("check"),
                                   QStringLiteral("evaluate every step's expect checks; exit 1 "
                                                  "naming the first step that fails"));
    const QCommandLineOption exportDir(
        QStringLiteral("export"),
        QStringLiteral("write each step's charts (PNG) and handout.pdf into DIR"),
        QStringLiteral("DIR"));
    const QCommandLineOption pageImages(
        QStringLiteral("page-images"),
        QStringLiteral("with --export: also write each page of handout.pdf as a PNG "
                       "(handout-title.png, handout-step-NN.png)"));
    const QCommandLineOption listOption(QStringLiteral("list"),
                                        QStringLiteral("list the bundled tours"));
    parser.addOptions({check, exportDir, pageImages, listOption});
    if (auto code = parseArguments(parser, args, "tour"))
        return *code;
    QTextStream out(stdout);
    if (parser.isSet(listOption))
        return list(out);
    if (parser.isSet(pageImages) && !parser.isSet(exportDir))
        return fail(
            QStringLiteral("tour: --page-images needs --export DIR (the handout's folder)"));
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1)
        return fail(QStringLiteral("tour: give exactly one TOUR file or bundled tour id "
                                   "(paralens tour --list)"));
    Tour tour;
    std::vector<TourStepResult> results;
    try {
        tour = loadTour(positional.first());
        results = runTour(tour);
    } catch (const InputError& e) {
        return fail(QString::fromStdString(e.what()));
    }

    out << QString::fromStdString(tour.title) << "\n";
    int failed = -1;
    for (std::size_t i = 0; i < tour.steps.size(); ++i) {
        const TourStepResult& r = results[i];
        const bool ok = r.failures.empty();
        if (!ok && failed < 0)
            failed = static_cast<int>(i);
        if (parser.isSet(check)) {
            out << QStringLiteral("%1 %2: %3\n")
                       .arg(ok ? QStringLiteral("ok  ") : QStringLiteral("FAIL"),
                            stepLabel(tour, i), figures(tour.steps[i], r));
            for (const std::string& f : r.failures)
                out << "       " << QString::fromStdString(f) << "\n";
        } else {
            out << "\n"
                << stepLabel(tour, i) << " [" << toString(tour.steps[i].view).data() << "]\n"
                << QString::fromStdString(r.caption) << "\n  " << figures(tour.steps[i], r) << "\n";
        }
    }
    out.flush();
    if (parser.isSet(exportDir)) {
        if (!qobject_cast<QGuiApplication*>(QCoreApplication::instance()))
            return fail(QStringLiteral("tour --export needs a GUI application instance (a bug)"));
        QStringList written;
        QString error;
        TourHandoutOptions options;
        options.pageImages = parser.isSet(pageImages);
        if (!exportTourHandout(tour, results, parser.value(exportDir), &written, &error, options))
            return fail(error);
        out << written.size() << " files written to " << parser.value(exportDir) << "\n";
    }
    if (parser.isSet(check) && failed >= 0) {
        const auto i = static_cast<std::size_t>(failed);
        return fail(QStringLiteral("%1: %2: %3")
                        .arg(QString::fromStdString(tour.source), stepLabel(tour, i),
                             QString::fromStdString(results[i].failures.front())));
    }
    return Ok;
}

} // namespace paralens::cli
