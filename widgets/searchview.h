// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include "core/search.h"
#include "widgets/backgroundjob.h"
#include "widgets/chartview.h"

#include <optional>
#include <vector>

class QCheckBox;
class QComboBox;
class QCPItemStraightLine;
class QSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QStandardItemModel;
class QTableView;

namespace paralens {

/// The configuration search view (docs/search.md): a Search / Cancel pair with a progress bar, a
/// scatter of plans (tokens/s against peak memory per GPU, coloured by a dimension picked in a
/// combo) with the Pareto front drawn as a line, and a sortable table of the top plans. The search
/// runs as a BackgroundJob (Cancel sets the flag the core polls); progress comes back on the GUI
/// thread. A problem that cannot be searched greys the chart with its reason, like a plan
/// that cannot run in the explorer's charts. Clicking a table row emits planChosen().
class SearchView : public ChartView
{
    Q_OBJECT
public:
    /// Dimensions the scatter can be coloured by (the combo's order).
    enum class ColourBy
    {
        TP,
        PP,
        DP,
        CP,
        EP,
        Schedule,
        Zero,
        Recompute,
        MicroBatch
    };

    explicit SearchView(QWidget* parent = nullptr);
    /// Cancels a running search and waits for it (milliseconds).
    ~SearchView() override;

    QString chartId() const override { return QStringLiteral("search"); }
    QString chartTitle() const override;

    /// The problem to search (model, cluster, gpus, global batch, seq_len, pins), normally the
    /// document's. Does not start. The panel's GPU count and global batch follow the space's
    /// when these change, and otherwise keep what the user typed there; space() is the
    /// problem with them.
    void setSpace(const SearchSpace& space);
    const SearchSpace& space() const { return m_space; }
    /// The panel's GPU count and global batch (what the next search uses).
    QSpinBox* gpusBox() const { return m_gpus; }
    QSpinBox* batchBox() const { return m_batch; }
    /// Whether the results shown were searched for another problem than space() (another
    /// model, cluster, GPU count, batch or training setting): then they are greyed, marked
    /// and cannot be applied until searched again.
    bool isStale() const { return m_stale; }
    /// One row per TP·PP·DP·CP·EP layout (its fastest plan), on by default: the plans
    /// behind it differ only in schedule, ZeRO, recompute or micro-batch.
    void setGroupByLayout(bool on);
    /// Only rows with this schedule; nullopt: every schedule.
    void setScheduleFilter(std::optional<Schedule> schedule);
    /// The result indices (ranks − 1) the table lists, in rank order.
    std::vector<int> listedPlans() const;
    QString statusText() const;
    /// Rows in the table (top K); default 100.
    void setTopK(int k) { m_topK = k; }
    /// Plans drawn at random for the scatter, besides the top K and the front; default 3000.
    void setSampleSize(int n) { m_sample = n; }
    /// Worker threads (0 = all cores).
    void setThreads(unsigned n) { m_threads = n; }
    void setColourBy(ColourBy c);

    /// Starts the search of space(); ignored while one runs.
    void start();
    /// Asks a running search to stop; finished() follows within milliseconds.
    void cancel();
    bool isRunning() const;
    /// The last finished search (empty before the first one).
    const SearchResult& result() const { return m_result; }
    /// The message of the last search that could not start (bad problem), or empty.
    QString errorText() const { return m_error; }

    QTableView* table() const { return m_table; }

signals:
    /// The user clicked a row: the full scenario of that plan, ready to load into the explorer.
    void planChosen(const paralens::Scenario& scenario);
    /// A search ended (complete, cancelled or failed); result() / errorText() hold the outcome.
    void finished();

protected:
    void clearData() override;
    void applyColors() override;

private:
    struct Outcome
    {
        SearchResult result;
        QString error;
    };
    void onProgress(double fraction, quint64 evaluated);
    void onFinished(const Outcome& out);
    void fillTable();
    void drawPlans();
    void rowClicked(const QModelIndex& index);
    void updateStale();
    void buildControls();

    /// Where the space's GPU count and batch came from, so a document change of one of them
    /// reaches the panel and an unrelated change keeps what the user typed.
    int m_spaceGpus = 0, m_spaceBatch = 0;
    SearchSpace m_searched; // the problem of the running search or of the results shown
    bool m_haveResults = false;
    bool m_stale = false;
    bool m_searching = false;
    QString m_doneText;
    SearchSpace m_space;
    SearchResult m_result;
    QString m_error;
    int m_topK = 100;
    int m_sample = 3000;
    unsigned m_threads = 0;

    QPushButton* m_start = nullptr;
    QPushButton* m_stop = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QComboBox* m_colour = nullptr;
    QSpinBox* m_gpus = nullptr;
    QSpinBox* m_batch = nullptr;
    QCheckBox* m_group = nullptr;
    QComboBox* m_scheduleFilter = nullptr;
    QPushButton* m_export = nullptr;
    QCPItemStraightLine* m_capacityLine = nullptr;
    QStandardItemModel* m_model = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
    QTableView* m_table = nullptr;
    BackgroundJob<Outcome> m_job; // last: destroyed (cancelled and waited for) first
};

} // namespace paralens
