// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/scenario.h"

#include <QObject>
#include <QString>

#include <array>
#include <functional>
#include <string>

class QAction;
class QCheckBox;
class QComboBox;
class QFormLayout;
class QToolButton;
class QWidget;

namespace paralens {

/// The framework group of the scenario controls: which framework runs the plan and the
/// settings real runs differ in (attention kernel, FP8 recipe, FP8 parameters, gradient dtype,
/// TP and DP overlap, torch.compile, FSDP version, prefetch and reshard, Megatron's recompute
/// modules and Adam moments dtype). Only the settings the
/// model reads for the shown plan are live (frameworkOptions()); the others show their value,
/// greyed.
///
/// One direction, as ControlPanel: an edit emits edited() with the whole new scenario; the
/// values change when show() hands the document's scenario back.
class FrameworkControls : public QObject
{
    Q_OBJECT
public:
    /// Adds the framework row to `form` and the settings to a folding form of its own, through
    /// `addRow` (form, label, field widget), the panel's own helper.
    using AddRow = std::function<void(QFormLayout* form, const QString& label, QWidget* field)>;
    FrameworkControls(QWidget* parent, QFormLayout* form, const AddRow& addRow);

    /// Shows `s` without emitting edited().
    void show(const Scenario& s);
    /// The control of a scenario key ("training.framework", ...), or nullptr.
    QWidget* widgetForField(const std::string& field) const;

    QComboBox* frameworkBox() const { return m_framework; }
    QComboBox* attentionBox() const { return m_attention; }
    QComboBox* fsdpVersionBox() const { return m_fsdpVersion; }
    QCheckBox* compileBox() const { return m_compile; }
    QToolButton* recomputeModulesButton() const { return m_recomputeModules; }
    QToolButton* settingsToggle() const { return m_more; }
    /// The folding form of the settings (the panel marks its labels on validation errors).
    QFormLayout* detailsForm() const { return m_detailsForm; }

signals:
    void edited(const paralens::Scenario& scenario, const QString& field);

private:
    void connectEdits();
    /// Connects `signal` of `w` to an edit of `field`: `apply(scenario, value)` on a copy of the
    /// shown scenario, then edited().
    template <typename Widget, typename Signal, typename Apply>
    void onEdit(Widget* w, Signal signal, const char* field, Apply apply);
    void commit(const Scenario& s, const char* field);

    Scenario m_scenario;
    QComboBox* m_framework = nullptr;
    QComboBox* m_attention = nullptr;
    QComboBox* m_fp8Recipe = nullptr;
    QComboBox* m_gradDtype = nullptr;
    QComboBox* m_moments = nullptr;
    QCheckBox* m_tpOverlap = nullptr;
    QCheckBox* m_gradOverlap = nullptr;
    QCheckBox* m_compile = nullptr;
    QCheckBox* m_fp8Params = nullptr;
    QComboBox* m_fsdpVersion = nullptr;
    QComboBox* m_prefetch = nullptr;
    QComboBox* m_reshard = nullptr;
    /// Megatron's recompute modules: a menu of one checkable action per module.
    QToolButton* m_recomputeModules = nullptr;
    std::array<QAction*, kRecomputeModuleCount> m_moduleActions{};
    QString m_recomputeTip;
    QToolButton* m_more = nullptr;
    QWidget* m_details = nullptr;
    QFormLayout* m_detailsForm = nullptr;
};

} // namespace paralens
