// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/scenario.h"
#include "core/validate.h"

#include <QWidget>

#include <map>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QSpinBox;

namespace paralens {

class FrameworkControls;
class PresetLibrary;
class SnapSlider;

/// The scenario controls: model, hardware, GPUs, parallel degrees, schedule, memory savers,
/// batch and the framework's settings (FrameworkControls). Sliders snap to values that keep the
/// plan runnable; a broken rule is shown inline with its named message.
///
/// One direction: a user edit only emits edited() with the whole new Scenario; the panel
/// shows it when the document hands it back through setScenario(), like every other view,
/// and shows the validation errors the document's evaluation carries (setErrors()). The
/// panel never validates on its own.
class ControlPanel : public QWidget
{
    Q_OBJECT
public:
    enum Dimension
    {
        Tp,
        Pp,
        Dp,
        Ep,
        Cp,
        DimensionCount
    };
    explicit ControlPanel(const PresetLibrary& presets, QWidget* parent = nullptr);

    /// Shows `s` without emitting edited(); the errors shown stay until setErrors().
    void setScenario(const Scenario& s);
    const Scenario& scenario() const { return m_scenario; }

    /// Marks the controls named by `errors` and lists them in the banner (empty: hidden).
    void setErrors(const std::vector<ValidationError>& errors);
    /// The validation errors currently shown (empty when the plan can run).
    const std::vector<ValidationError>& errors() const { return m_errors; }
    /// The text of the inline banner ("" when hidden).
    QString bannerText() const;
    /// The figures below the controls: nodes, micro-batches per step and, after a GPU count
    /// that the plan could not take as it was, what changed to fit it.
    QString derivedText() const;

    SnapSlider* slider(Dimension d) const { return m_sliders[d]; }
    QComboBox* modelBox() const { return m_model; }
    QComboBox* hardwareBox() const { return m_hardware; }
    QSpinBox* gpusBox() const { return m_gpus; }
    FrameworkControls* frameworkControls() const { return m_frameworkControls; }

signals:
    /// The user asks for `scenario`, changed in `field` (a JSON path such as "parallel.tp");
    /// `mergeKey` > 0 while one slider drag lasts, so the document can fold the drag into one
    /// undo step. The panel still shows the old scenario until setScenario().
    void edited(const paralens::Scenario& scenario, const QString& field, int mergeKey);

protected:
    void changeEvent(QEvent* event) override;

private:
    void build();
    void commit(const Scenario& s, const QString& field, int mergeKey = 0);
    void refreshValues();
    void showValidation();
    QWidget* widgetForField(const std::string& field) const;

    const PresetLibrary& m_presets;
    Scenario m_scenario;
    std::vector<ValidationError> m_errors;

    QComboBox* m_model = nullptr;
    QComboBox* m_hardware = nullptr;
    QSpinBox* m_gpus = nullptr;
    SnapSlider* m_sliders[DimensionCount] = {};
    QComboBox* m_schedule = nullptr;
    QSpinBox* m_virtualStages = nullptr;
    QComboBox* m_zero = nullptr;
    QComboBox* m_recompute = nullptr;
    QSpinBox* m_recomputeLayers = nullptr; ///< training.recompute_num_layers (0: all)
    QWidget* m_recomputeRow = nullptr;     ///< the two above, one form row
    QCheckBox* m_sequenceParallel = nullptr;
    QComboBox* m_precision = nullptr;
    QSpinBox* m_microBatch = nullptr;
    QSpinBox* m_globalBatch = nullptr;
    QSpinBox* m_seqLen = nullptr;
    FrameworkControls* m_frameworkControls = nullptr;
    QLabel* m_derived = nullptr;
    QLabel* m_banner = nullptr;
    std::vector<QFormLayout*> m_forms;
    std::map<QWidget*, QString> m_fieldLabels; // form label text of each field widget
    QString m_rebalanceNote; // what the last GPU count edit changed, while it is shown
    Scenario m_rebalanced;
};

} // namespace paralens
