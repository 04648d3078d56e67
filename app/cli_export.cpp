// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli_commands.h"
#include "app/evaluator.h"
#include "app/export.h"
#include "core/calibration.h"
#include "core/error.h"
#include "core/scenario_io.h"
#include "widgets/chartview.h"
#include "widgets/topologyview.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QGuiApplication>
#include <QRegularExpression>
#include <QTextStream>

namespace paralens::cli {

// paralens export SCENARIO --chart memory|breakdown|topology|gantt --out FILE [--size WxH]
int cmdExport(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Write one chart of a scenario as PNG, SVG or PDF (by the file suffix)."));
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("scenario"),
                                 QStringLiteral("SCENARIO.paralens.json"));
    const QCommandLineOption chart(QStringLiteral("chart"),
                                   QStringLiteral("memory, breakdown, topology or gantt"),
                                   QStringLiteral("name"));
    const QCommandLineOption out(QStringLiteral("out"), QStringLiteral("output .png/.svg/.pdf"),
                                 QStringLiteral("file"));
    const QCommandLineOption size(QStringLiteral("size"),
                                  QStringLiteral("WxH in pixels at 96 dpi (default 1200x800)"),
                                  QStringLiteral("WxH"), QStringLiteral("1200x800"));
    const QCommandLineOption scale(QStringLiteral("scale"),
                                   QStringLiteral("PNG pixels per unit of size (default 1)"),
                                   QStringLiteral("factor"), QStringLiteral("1"));
    const QCommandLineOption colorBy(
        QStringLiteral("color-by"),
        QStringLiteral("topology colouring: tp, pp, dp, ep, cp or node (default tp)"),
        QStringLiteral("group"), QStringLiteral("tp"));
    parser.addOptions({chart, out, size, scale, colorBy});
    if (!parser.parse(args))
        return fail(QStringLiteral("export: %1").arg(parser.errorText()));
    if (parser.isSet(QStringLiteral("help"))) {
        QTextStream(stdout) << usageText(parser, "export");
        return Ok;
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1)
        return fail(QStringLiteral("export: give exactly one SCENARIO file"));
    if (!parser.isSet(chart))
        return fail(QStringLiteral("export: --chart is required (memory, breakdown, topology, "
                                   "gantt)"));
    if (!parser.isSet(out))
        return fail(QStringLiteral("export: --out FILE.png|svg|pdf is required"));
    const QString outPath = parser.value(out);
    if (!exportFormatFor(outPath))
        return fail(QStringLiteral("--out: '%1' must end in .png, .svg or .pdf").arg(outPath));

    static const QRegularExpression sizeRe(QStringLiteral("^(\\d{1,5})x(\\d{1,5})$"));
    const auto m = sizeRe.match(parser.value(size));
    if (!m.hasMatch())
        return fail(
            QStringLiteral("--size: '%1' is not WxH (e.g. 1200x800)").arg(parser.value(size)));
    ExportOptions options;
    options.size = QSize(m.captured(1).toInt(), m.captured(2).toInt());
    bool scaleOk = false;
    options.scale = parser.value(scale).toDouble(&scaleOk);
    if (!scaleOk)
        return fail(QStringLiteral("--scale: '%1' is not a number").arg(parser.value(scale)));

    const QStringList groups{QStringLiteral("tp"), QStringLiteral("pp"), QStringLiteral("dp"),
                             QStringLiteral("ep"), QStringLiteral("cp"), QStringLiteral("node")};
    const int group = groups.indexOf(parser.value(colorBy));
    if (group < 0)
        return fail(QStringLiteral("--color-by: '%1' must be one of tp, pp, dp, ep, cp, node")
                        .arg(parser.value(colorBy)));

    if (!qobject_cast<QGuiApplication*>(QCoreApplication::instance()))
        return fail(QStringLiteral("export needs a GUI application instance (a bug)"));

    Scenario scenario;
    try {
        scenario = loadScenarioFile(positional.first().toStdString(), presets());
    } catch (const InputError& e) {
        return fail(QString::fromStdString(e.what()));
    }
    std::unique_ptr<MeasuredPerformance> calibration;
    try {
        calibration =
            loadCalibration(scenario, QFileInfo(positional.first()).absolutePath().toStdString());
    } catch (const InputError& e) {
        return fail(QString::fromStdString(e.what()));
    }
    const Evaluation evaluation = Evaluator::evaluateScenario(scenario, 0, calibration.get());
    if (!evaluation.ok())
        return fail(QStringLiteral("%1: the plan cannot run: %2")
                        .arg(positional.first(), evaluation.reason().section('\n', 0, 0)));
    QString error;
    std::unique_ptr<ChartView> view = makeChart(parser.value(chart), evaluation, &error);
    if (!view)
        return fail(error);
    if (auto* topology = qobject_cast<TopologyView*>(view.get()))
        topology->setColorBy(static_cast<TopologyView::ColorBy>(group));
    view->resize(options.size);
    if (!exportChart(view.get(), outPath, options, scenarioStamp(scenario), &error))
        return fail(error);
    return Ok;
}

} // namespace paralens::cli
