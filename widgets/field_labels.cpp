// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/field_labels.h"
#include "widgets/qt_text.h"

#include <QCoreApplication>
#include <QRegularExpression>

#include <map>

namespace paralens {
namespace {

// The control panel's labels (without their mnemonics) and the model's own terms.
const std::map<std::string_view, const char*>& labels()
{
    static const std::map<std::string_view, const char*> table{
        {"gpus", QT_TRANSLATE_NOOP("FieldLabels", "GPUs")},
        {"model", QT_TRANSLATE_NOOP("FieldLabels", "model")},
        {"hardware", QT_TRANSLATE_NOOP("FieldLabels", "hardware")},
        {"parallel.tp", QT_TRANSLATE_NOOP("FieldLabels", "TP")},
        {"parallel.pp", QT_TRANSLATE_NOOP("FieldLabels", "PP")},
        {"parallel.dp", QT_TRANSLATE_NOOP("FieldLabels", "DP")},
        {"parallel.cp", QT_TRANSLATE_NOOP("FieldLabels", "CP")},
        {"parallel.ep", QT_TRANSLATE_NOOP("FieldLabels", "EP")},
        {"parallel.expert_tp", QT_TRANSLATE_NOOP("FieldLabels", "expert TP")},
        {"parallel.schedule", QT_TRANSLATE_NOOP("FieldLabels", "schedule")},
        {"parallel.virtual_stages", QT_TRANSLATE_NOOP("FieldLabels", "virtual stages")},
        {"parallel.zero", QT_TRANSLATE_NOOP("FieldLabels", "ZeRO stage")},
        {"parallel.shard_group", QT_TRANSLATE_NOOP("FieldLabels", "ZeRO shard group")},
        {"parallel.sequence_parallel", QT_TRANSLATE_NOOP("FieldLabels", "sequence parallel")},
        {"parallel.first_stage_layers", QT_TRANSLATE_NOOP("FieldLabels", "first-stage layers")},
        {"parallel.last_stage_layers", QT_TRANSLATE_NOOP("FieldLabels", "last-stage layers")},
        {"last_stage_layers", QT_TRANSLATE_NOOP("FieldLabels", "last-stage layers")},
        {"training.micro_batch", QT_TRANSLATE_NOOP("FieldLabels", "micro-batch")},
        {"training.global_batch", QT_TRANSLATE_NOOP("FieldLabels", "global batch")},
        {"training.seq_len", QT_TRANSLATE_NOOP("FieldLabels", "sequence length")},
        {"training.recompute", QT_TRANSLATE_NOOP("FieldLabels", "recompute")},
        {"training.recompute_modules", QT_TRANSLATE_NOOP("FieldLabels", "recompute modules")},
        {"training.recompute_num_layers", QT_TRANSLATE_NOOP("FieldLabels", "recompute layers")},
        {"training.adam_moments_dtype", QT_TRANSLATE_NOOP("FieldLabels", "Adam moments dtype")},
        {"training.precision", QT_TRANSLATE_NOOP("FieldLabels", "precision")},
        {"model.layers", QT_TRANSLATE_NOOP("FieldLabels", "the model's layers")},
        {"model.heads", QT_TRANSLATE_NOOP("FieldLabels", "the model's attention heads")},
        {"model.kv_heads", QT_TRANSLATE_NOOP("FieldLabels", "the model's KV heads")},
        {"model.moe.experts", QT_TRANSLATE_NOOP("FieldLabels", "the model's experts")},
        {"model.moe.expert_ffn_hidden", QT_TRANSLATE_NOOP("FieldLabels", "the expert FFN width")},
        {"hardware.gpus_per_node", QT_TRANSLATE_NOOP("FieldLabels", "GPUs per node")},
    };
    return table;
}

} // namespace

QString fieldLabel(std::string_view key)
{
    const auto& table = labels();
    if (auto it = table.find(key); it != table.end())
        return QCoreApplication::translate("FieldLabels", it->second);
    QString label = qText(key);
    label = label.section(QLatin1Char('.'), 1); // "training.foo_bar" -> "foo_bar"
    if (label.isEmpty())
        label = qText(key);
    return label.replace(QLatin1Char('_'), QLatin1Char(' '));
}

QString withFieldLabels(const QString& message)
{
    // A key is a known one, or a dotted path under one of the scenario's sections; never a
    // part of a longer word or number ("gpus" in "gpus_per_node" is taken with its suffix).
    static const QRegularExpression key(QStringLiteral(
        "(?<![\\w.])(?:(?:parallel|training|model|hardware|cluster)\\.[a-z_][a-z0-9_.]*[a-z0-9_]"
        "|gpus|last_stage_layers)(?![\\w])"));
    QString out;
    qsizetype at = 0;
    for (auto it = key.globalMatch(message); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        out += message.mid(at, m.capturedStart() - at);
        out += fieldLabel(m.captured().toStdString());
        at = m.capturedEnd();
    }
    return out + message.mid(at);
}

QString withFieldLabels(std::string_view message)
{
    return withFieldLabels(qText(message));
}

} // namespace paralens
