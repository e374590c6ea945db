#pragma once

#include "app/gui/sources/ComparisonSource.h"

#include <QDialog>

#include <array>

class QLabel;
class QLineEdit;

namespace attnscope {

// File > Compare…: A and B, each an attention file, a project file or a model folder with the
// text it reads.
// OK checks both (ComparisonSide::problem) and says the first problem in one line instead of
// closing.
class CompareDialog : public QDialog
{
    Q_OBJECT

public:
    // Starts from `a` and `b` (a folder and text already open, say); `lastDir` is where the
    // file and folder choosers start.
    CompareDialog(const ComparisonSide &a, const ComparisonSide &b, const QString &lastDir, QWidget *parent = nullptr);

    ComparisonSide side(int which) const;
    QLineEdit *pathEdit(int which) const { return m_paths[size_t(which)]; }
    QLineEdit *textEdit(int which) const { return m_texts[size_t(which)]; }
    QLabel *problemLabel() const { return m_problem; }
    // The first problem of the two sides, said in the dialog; empty when there is none.
    QString check();

    void accept() override;

private:
    void updateText(int which);

    std::array<QLineEdit *, 2> m_paths{};
    std::array<QLineEdit *, 2> m_texts{};
    QLabel *m_problem;
    QString m_lastDir;
};

} // namespace attnscope
