#include "app/gui/views/CompareDialog.h"

#include "app/gui/views/PlainText.h"

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace attnscope {

CompareDialog::CompareDialog(const ComparisonSide &a, const ComparisonSide &b, const QString &lastDir, QWidget *parent)
    : QDialog(parent), m_problem(plainLabel()), m_lastDir(lastDir)
{
    setObjectName(QStringLiteral("compareDialog"));
    setWindowTitle(tr("Compare"));
    auto *layout = new QVBoxLayout(this);
    auto *intro =
        plainLabel(tr("Compare two runs cell by cell: two texts on one model, one text on two models of "
                      "the same shape, two attention files or two projects. The views then show B \u2212 A."));
    intro->setWordWrap(true);
    layout->addWidget(intro);
    const ComparisonSide sides[] = {a, b};
    for (int i = 0; i < 2; ++i) {
        auto *box = new QGroupBox(i == 0 ? tr("A") : tr("B"));
        auto *form = new QFormLayout(box);
        auto *path = new QLineEdit(sides[i].path);
        path->setObjectName(i == 0 ? QStringLiteral("comparePathA") : QStringLiteral("comparePathB"));
        path->setPlaceholderText(
            tr("An attention file (.npy, .npz, .safetensors), a project (.attnscope.json) or a model folder"));
        m_paths[size_t(i)] = path;
        auto *file = new QPushButton(tr("File\u2026"));
        auto *folder = new QPushButton(tr("Folder\u2026"));
        auto *pathRow = new QHBoxLayout;
        pathRow->addWidget(path, 1);
        pathRow->addWidget(file);
        pathRow->addWidget(folder);
        form->addRow(tr("&Run:"), pathRow);
        auto *text = new QLineEdit(sides[i].text);
        text->setObjectName(i == 0 ? QStringLiteral("compareTextA") : QStringLiteral("compareTextB"));
        text->setPlaceholderText(tr("The text a model folder reads"));
        m_texts[size_t(i)] = text;
        form->addRow(tr("&Text:"), text);
        layout->addWidget(box);
        connect(path, &QLineEdit::textChanged, this, [this, i] { updateText(i); });
        connect(file, &QPushButton::clicked, this, [this, path] {
            const QString chosen = QFileDialog::getOpenFileName(
                this, tr("Attention file or project"), m_lastDir,
                tr("Attention files, Q/K dumps and projects (*.npy *.npz *.safetensors attnscope-qk.json "
                   "*.attnscope.json);;All files (*)"));
            if (!chosen.isEmpty())
                path->setText(chosen);
        });
        connect(folder, &QPushButton::clicked, this, [this, path] {
            const QString chosen = QFileDialog::getExistingDirectory(this, tr("Model folder"), m_lastDir);
            if (!chosen.isEmpty())
                path->setText(chosen);
        });
        updateText(i);
    }
    m_problem->setObjectName(QStringLiteral("compareProblem"));
    m_problem->setStyleSheet(QStringLiteral("color: #b00020"));
    m_problem->hide();
    layout->addWidget(m_problem);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Compare"));
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &CompareDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &CompareDialog::reject);
    resize(640, sizeHint().height());
}

void CompareDialog::updateText(int which)
{
    // A text only means something for a model folder.
    m_texts[size_t(which)]->setEnabled(QFileInfo(m_paths[size_t(which)]->text()).isDir());
}

ComparisonSide CompareDialog::side(int which) const
{
    ComparisonSide s;
    s.path = m_paths[size_t(which)]->text().trimmed();
    s.text = m_texts[size_t(which)]->text();
    return s;
}

QString CompareDialog::check()
{
    QString problem = side(0).problem(tr("A"));
    if (problem.isEmpty())
        problem = side(1).problem(tr("B"));
    m_problem->setText(problem);
    m_problem->setVisible(!problem.isEmpty());
    return problem;
}

void CompareDialog::accept()
{
    if (check().isEmpty())
        QDialog::accept();
}

} // namespace attnscope
