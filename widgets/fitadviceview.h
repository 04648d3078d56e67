// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/fit_advice.h"
#include "widgets/backgroundjob.h"

#include <QTimer>
#include <QWidget>

class QLabel;
class QPushButton;
class QTableWidget;

namespace paralens {

/// Why the plan does not fit, and what would (docs/fit-advice.md): the worst stage's largest
/// memory terms with their bytes and share, and a table of the nearest plans that fit (core
/// adviseFit(): one or two settings changed), fastest first, each with an Apply button that
/// emits suggestionChosen(). The advice is computed off the GUI thread (a BackgroundJob), a
/// newer scenario superseding an older one, so it can follow every edit.
class FitAdviceView : public QWidget
{
    Q_OBJECT
public:
    explicit FitAdviceView(QWidget* parent = nullptr);
    ~FitAdviceView() override;
    QSize sizeHint() const override;

    /// The scenario to advise on; computed now when `active`, else when next made active.
    void setScenario(const Scenario& s, bool active = true);
    /// A search is waiting for the edits to pause, or running.
    bool isComputing() const { return isPending() || m_job.isBusy(); }
    /// An edit came in less than the pause ago: the search waits for the next.
    bool isPending() const { return m_pending->isActive(); }
    /// The advice shown (for the scenario of the newest finished job).
    const FitAdvice& advice() const { return m_advice; }
    QTableWidget* table() const { return m_table; }
    /// The Apply button of suggestion `row` (tests), or nullptr.
    QPushButton* applyButton(int row) const;
    /// The headline and the terms, as shown (tests, screen readers).
    QString headlineText() const;
    QString termsText() const;

signals:
    /// The user applied a suggestion: the whole scenario, ready to become the document's.
    void suggestionChosen(const paralens::Scenario& scenario);
    /// New advice is shown.
    void adviceReady();

private:
    void start();
    void showAdvice(const FitAdvice& a);
    void fillTable();

    Scenario m_scenario;
    bool m_stale = true;
    FitAdvice m_advice;
    QLabel* m_headline = nullptr;
    QLabel* m_terms = nullptr;
    QLabel* m_listTitle = nullptr;
    QTableWidget* m_table = nullptr;
    QTimer* m_pending = nullptr;    ///< starts the search once the edits pause
    BackgroundJob<FitAdvice> m_job; // last: destroyed (waited for) first
};

} // namespace paralens
