#pragma once

#include "app/gui/document/JobRunner.h"
#include "app/gui/document/ModelController.h"
#include "app/gui/sources/SetSource.h"
#include "core/analysis/Comparison.h"

#include <QPointer>

#include <array>
#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;

namespace attnscope {

class ComparisonStatsTable;
class SideBySideView;

// One side of a comparison: an attention file (read as File > Open reads one), a model folder
// run on a text, or a project (its file, or as it is in memory: edited and not saved) computed
// as the editor computes it (one layer).
struct ComparisonSide {
    QString path;   // an attention file (.npy, .npz, .safetensors, a Q/K dump), a project file or a model folder
    QString text;   // what a model folder runs on
    ModelPtr model; // the model of folder `path` where it is loaded already (null: loaded here)
    // A project as it is in memory, computed instead of reading `path` (which then only names it:
    // its file, or empty for an untitled one).
    std::shared_ptr<const Project> project;

    bool isModel() const;
    bool isProject() const; // `project` given, or `path` a project file (*.attnscope.json)
    // What is wrong with the side before anything is read, in one line naming the side ("A: …"),
    // or empty.
    QString problem(const QString &name) const;
};
using ComparisonPtr = std::shared_ptr<const AttentionComparison>;

// Comparison as its own source (issue 26): two runs, A and B (two texts on one model, one text
// on two models of one shape, two attention files), compared cell by cell (core's compareSets).
// The views show B − A of the current layer, a signed set drawn on a diverging scale around 0,
// or A or B as chosen ("Show:"); a panel above the views shows the current head of A, of B and
// of B − A side by side, and the "Differences" tab the statistics of both and of the difference
// (comparisonStatistics). A model side runs its text as it is typed, a newer text superseding
// an older one, on a worker (one model loaded once when both sides read one folder). A pair that
// cannot be compared (different token counts, shapes) is refused in one line in the status bar
// and the banner while the views keep the last comparison; a first comparison refused is
// failed(), so the window changes nothing.
class ComparisonSource : public SetSource
{
    Q_OBJECT

public:
    enum class Shown { Difference, A, B };

    ComparisonSource(SourceHost &host, ComparisonSide a, ComparisonSide b, QObject *parent = nullptr);
    ~ComparisonSource() override;

    const ComparisonSide &side(int which) const { return m_sides[size_t(which)]; }
    // The comparison shown, or null before the first.
    ComparisonPtr comparison() const { return m_comparison; }
    Shown shownKind() const { return m_shown; }
    void setShown(Shown shown);
    // A model side's text box (null for a file's): editing it runs the model again.
    QLineEdit *textEdit(int which) const { return m_texts[size_t(which)]; }
    QComboBox *showSelector() const { return m_showBox; }
    SideBySideView *sideBySide() const;
    ComparisonStatsTable *statisticsTable() const;
    // "A: <text or file name>"
    QString sideTitle(int which) const;

    void setInFront(bool front) override;
    void setLayer(int layer) override;
    QString title() const override;
    ShownAttention requested() const override;
    QString exportStem() const override;

signals:
    // A new comparison is shown (the views' set, the side-by-side panel, the statistics).
    void compared(attnscope::ComparisonPtr comparison);
    // The side-by-side panel shows the current layer of the comparison shown.
    void sideBySideShown();
    // A comparison was refused; the views keep the last one.
    void refused(const QString &reason);

protected:
    QString origin() const override;
    void announce() override;

private:
    void startSide(int which);
    void readFile(int which);
    void computeProject(int which);
    QString nameOf(int which) const; // the file name, or an in-memory project's title
    void sideReady(int which, const AttentionSet &set);
    void sideFailed(int which, const QString &message);
    void compare();
    void show(ComparisonPtr comparison, std::vector<HeadDifference> stats);
    void refuse(const QString &reason);
    void showKind(bool keepView);
    void readSideBySide();
    void syncHead();
    const AttentionSet *setOf(Shown shown) const;

    std::array<ComparisonSide, 2> m_sides;
    std::array<ModelController *, 2> m_models{}; // null for a file side
    std::array<std::optional<AttentionSet>, 2> m_sets;
    ComparisonPtr m_comparison;
    Shown m_shown = Shown::Difference;
    QPointer<QWidget> m_topRow; // the texts and Show: (the window's layout may delete it first)
    QPointer<SideBySideView> m_sideBySide;
    QPointer<ComparisonStatsTable> m_statsTable;
    std::array<QLineEdit *, 2> m_texts{};
    QComboBox *m_showBox = nullptr;
    QCheckBox *m_sideBySideBox = nullptr;
    // Reading A's file, reading B's, comparing, reading the side-by-side layer: newest wins in each.
    JobLane m_lanes[4] = {JobLane(this), JobLane(this), JobLane(this), JobLane(this)};
};

} // namespace attnscope
