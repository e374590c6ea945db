// ProjectSource: new, open, save, and recovery of unsaved changes.

#include "app/gui/sources/ProjectSource.h"

#include "app/gui/document/Autosave.h"
#include "app/gui/views/PlainText.h"
#include "app/gui/views/RecentFiles.h"
#include "app/gui/views/WindowStatus.h"
#include "app/render/ErrorText.h"
#include "core/attention/RandomProblem.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLocale>
#include <QMainWindow>
#include <QMessageBox>
#include <QPushButton>

#include <memory>

namespace attnscope {

Project ProjectSource::newProject()
{
    Project p;
    p.title = tr("New project").toStdString();
    p.queryTokens = {"The", "cat", "sat", "down"};
    AttentionProblem &pr = p.problem;
    pr.spec.heads = 2;
    pr.spec.headDimQK = 4;
    pr.spec.headDimV = 4;
    pr.xq = initMatrix(4, 8, InitKind::Gaussian, 11, 1.0);
    pr.weights.q = initMatrix(8, 8, InitKind::Xavier, 12);
    pr.weights.k = initMatrix(8, 8, InitKind::Xavier, 13);
    pr.weights.v = initMatrix(8, 8, InitKind::Xavier, 14);
    return p;
}

void ProjectSource::newDocument()
{
    setDocument(new Document(newProject()));
}

bool ProjectSource::open(const QString &path, Result<Project> project)
{
    if (!project) {
        m_host.status->error(errorText(project.error()));
        return false;
    }
    auto *doc = new Document(std::move(*project));
    if (!path.startsWith(QLatin1Char(':'))) {
        doc->setFilePath(QFileInfo(path).absoluteFilePath());
        addRecentFile(doc->filePath());
        m_host.lastDir = QFileInfo(path).absolutePath();
    }
    setDocument(doc);
    m_host.status->setLastError({});
    m_host.status->message(tr("Opened %1").arg(doc->displayName()), 4000);
    return true;
}

bool ProjectSource::saveTo(const QString &path)
{
    if (!m_document || !m_front)
        return false; // another source is read-only: File > Export writes figures and data
    Status s = m_document->save(path);
    if (!s) {
        m_host.status->error(errorText(s.error()));
        return false;
    }
    addRecentFile(m_document->filePath());
    m_host.lastDir = QFileInfo(path).absolutePath();
    // References not kept as they were: copies beside the file are said in the status bar;
    // matrices written inline because their .npy changed or went are said in a box, since the
    // saved project no longer follows that file.
    QStringList copied, inlined;
    for (const ReferenceNote &note : m_document->lastSaveNotes())
        (note.kind == ReferenceNote::Kind::Copied ? copied : inlined) << referenceNoteText(note);
    QString message = tr("Saved %1").arg(QFileInfo(path).fileName());
    if (!copied.isEmpty())
        message += QLatin1Char(' ') + copied.join(QLatin1Char(' '));
    m_host.status->message(message, copied.isEmpty() ? 4000 : 0);
    if (!inlined.isEmpty()) {
        auto *box = plainMessageBox(QMessageBox::Information, tr("AttnScope"),
                                    tr("Saved %1; some matrices are written in it now instead of as their .npy files:")
                                        .arg(QFileInfo(path).fileName()),
                                    QMessageBox::Ok, m_host.window);
        box->setObjectName(QStringLiteral("saveNotesBox"));
        setPlainInformativeText(box, inlined.join(QLatin1Char('\n'))); // paths and messages from files
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
    return true;
}

QString ProjectSource::referenceNoteText(const ReferenceNote &note)
{
    const QString field = QString::fromStdString(note.field), path = QString::fromStdString(note.path),
                  detail = QString::fromStdString(note.detail);
    switch (note.kind) {
    case ReferenceNote::Kind::Changed:
        return tr("%1: %2 changed on disk since it was opened; the values shown are saved in the project instead.")
            .arg(field, path);
    case ReferenceNote::Kind::Unreadable:
        return tr("%1: %2 could not be read again (%3); the values shown are saved in the project instead.")
            .arg(field, path, detail);
    case ReferenceNote::Kind::Copied:
        return tr("%1 was copied beside it as %2.").arg(path, detail);
    case ReferenceNote::Kind::NotCopied:
        return tr("%1: %2 could not be copied beside the project (%3); its values are saved in the project instead.")
            .arg(field, path, detail);
    }
    return {};
}

bool ProjectSource::maybeSave()
{
    if (!m_document || !m_document->isModified())
        return true;
    const std::unique_ptr<QMessageBox> box(
        plainMessageBox(QMessageBox::Warning, tr("AttnScope"),
                        tr("\u201c%1\u201d has unsaved changes. Save them?").arg(m_document->displayName()),
                        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, m_host.window));
    box->setObjectName(QStringLiteral("saveChangesBox"));
    const auto answer = QMessageBox::StandardButton(box->exec());
    if (answer == QMessageBox::Save)
        return save();
    return answer == QMessageBox::Discard;
}

bool ProjectSource::save()
{
    if (!m_document)
        return false;
    if (m_document->filePath().isEmpty())
        return saveAs();
    return saveTo(m_document->filePath());
}

bool ProjectSource::saveAs()
{
    if (!m_document)
        return false;
    QString suggested = m_document->filePath();
    if (suggested.isEmpty())
        suggested = QDir(m_host.lastDir).filePath(tr("untitled") + QStringLiteral(".attnscope.json"));
    const QString path =
        QFileDialog::getSaveFileName(m_host.window, tr("Save project"), suggested,
                                     tr("AttnScope projects (*.attnscope.json *.json);;All files (*)"));
    return !path.isEmpty() && saveTo(path);
}

bool ProjectSource::offerRecovery(std::optional<bool> answer)
{
    for (const Autosaver::Entry &entry : Autosaver::orphanedCopies()) {
        if (!entry.error.isEmpty()) {
            // Unreadable: said, with why, and deleted only when the user says so. `answer`
            // (tests) keeps it for "recover", which cannot be done, and deletes it otherwise.
            bool discard = answer.has_value() && !*answer;
            if (!answer) {
                // Plain text: the error quotes the file.
                const std::unique_ptr<QMessageBox> box(
                    plainMessageBox(QMessageBox::Warning, tr("Recover unsaved changes"),
                                    tr("AttnScope did not close normally, and a copy of unsaved changes it kept "
                                       "cannot be read: %1")
                                        .arg(entry.error),
                                    QMessageBox::NoButton, m_host.window));
                box->setObjectName(QStringLiteral("recoveryBox"));
                setPlainInformativeText(
                    box.get(),
                    tr("Keep leaves it in %1 for later; Discard deletes it.").arg(Autosaver::recoveryDirectory()));
                QPushButton *keepButton = box->addButton(tr("&Keep"), QMessageBox::RejectRole);
                QPushButton *discardButton = box->addButton(tr("&Discard"), QMessageBox::DestructiveRole);
                box->setDefaultButton(keepButton);
                box->exec();
                discard = box->clickedButton() == discardButton;
            }
            if (discard)
                QFile::remove(entry.recoveryPath);
            continue;
        }
        auto copy = Autosaver::readCopy(entry.recoveryPath);
        if (!copy)
            continue; // gone or spoilt since it was listed: the next start says why
        const QString name =
            entry.originalPath.isEmpty()
                ? (copy->first.title.empty() ? tr("an untitled project") : QString::fromStdString(copy->first.title))
                : entry.originalPath;
        bool recover = answer.value_or(false);
        if (!answer) {
            const std::unique_ptr<QMessageBox> box(
                plainMessageBox(QMessageBox::Question, tr("Recover unsaved changes"),
                                tr("AttnScope did not close normally. Unsaved changes to %1 from %2 were kept.")
                                    .arg(name, QLocale().toString(entry.saved.toLocalTime(), QLocale::ShortFormat)),
                                QMessageBox::NoButton, m_host.window));
            box->setObjectName(QStringLiteral("recoveryBox"));
            setPlainInformativeText(box.get(), tr("Recover opens them as a modified document; Discard deletes them."));
            QPushButton *recoverButton = box->addButton(tr("&Recover"), QMessageBox::AcceptRole);
            box->addButton(tr("&Discard"), QMessageBox::DestructiveRole);
            box->setDefaultButton(recoverButton);
            box->exec();
            recover = box->clickedButton() == recoverButton;
        }
        if (!recover) {
            QFile::remove(entry.recoveryPath);
            continue;
        }
        auto *doc = new Document(std::move(copy->first));
        doc->setFilePath(entry.originalPath);
        doc->markModified();
        setDocument(doc);
        // This process's own copy first, then the old one goes: never a moment without one.
        if (m_autosaver->saveNow())
            QFile::remove(entry.recoveryPath);
        m_host.status->message(tr("Recovered unsaved changes to %1").arg(name), 8000);
        return true; // the others stay for the next start
    }
    return false;
}

} // namespace attnscope
