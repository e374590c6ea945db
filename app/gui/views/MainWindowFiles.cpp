// MainWindow: files, recent files, examples, drag and drop, settings.

#include "app/gui/views/MainWindow.h"

#include "app/gui/document/Autosave.h"
#include "app/gui/views/ElidedLabel.h"
#include "app/gui/views/Examples.h"
#include "app/gui/views/PlainText.h"
#include "app/gui/views/WindowPolish.h"
#include "app/render/ErrorText.h"

#include "core/attention/RandomProblem.h"

#include <QActionGroup>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMap>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QUndoStack>

#include <memory>

namespace attnscope {

namespace {

const char *const kRecentKey = "files/recent";
constexpr int kMaxRecent = 8;

QString projectFilter()
{
    return MainWindow::tr("AttnScope projects (*.attnscope.json *.json);;All files (*)");
}

QString openFilter()
{
    return MainWindow::tr("Projects and attention files (*.attnscope.json *.json *.npy *.npz *.safetensors);;"
                          "AttnScope projects (*.attnscope.json *.json);;"
                          "Attention files (*.npy *.npz *.safetensors);;All files (*)");
}

// A small self-attention problem to start from: four tokens, two heads.
Project newProject()
{
    Project p;
    p.title = MainWindow::tr("New project").toStdString();
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

} // namespace

QStringList MainWindow::exampleFiles()
{
    QStringList out;
    for (const ExampleEntry &e : builtInExamples())
        out << e.path;
    return out;
}

void MainWindow::newDocument()
{
    setDocument(new Document(newProject()));
}

void MainWindow::setBlankDocumentBehind()
{
    setDocument(new Document(newProject()), true);
}

bool MainWindow::openFile(const QString &path)
{
    if (isAttentionFilePath(path.toStdString()))
        return openAttentionFile(path);
    if (QFileInfo(path).isDir())
        return openModel(path);
    return openProject(path, Document::readProject(path));
}

bool MainWindow::openProject(const QString &path, Result<Project> project)
{
    if (!project) {
        showError(errorText(project.error()));
        return false;
    }
    auto *doc = new Document(std::move(*project));
    if (!path.startsWith(QLatin1Char(':'))) {
        doc->setFilePath(QFileInfo(path).absoluteFilePath());
        addRecentFile(doc->filePath());
        m_lastDir = QFileInfo(path).absolutePath();
    }
    setDocument(doc);
    m_lastError.clear();
    m_messageLabel->showMessage(tr("Opened %1").arg(doc->displayName()), 4000);
    return true;
}

bool MainWindow::openExample(const QString &resourcePath)
{
    // Opened untitled whatever folder its copy was read from: Save asks where to.
    return openProject(resourcePath, readExample(resourcePath));
}

bool MainWindow::saveTo(const QString &path)
{
    if (!m_document || m_attention)
        return false; // an attention file is read-only: File > Export writes figures and data
    Status s = m_document->save(path);
    if (!s) {
        showError(errorText(s.error()));
        return false;
    }
    addRecentFile(m_document->filePath());
    m_lastDir = QFileInfo(path).absolutePath();
    // References not kept as they were: copies beside the file are said in the status bar;
    // matrices written inline because their .npy changed or went are said in a box, since the
    // saved project no longer follows that file.
    QStringList copied, inlined;
    for (const ReferenceNote &note : m_document->lastSaveNotes())
        (note.kind == ReferenceNote::Kind::Copied ? copied : inlined) << referenceNoteText(note);
    QString message = tr("Saved %1").arg(QFileInfo(path).fileName());
    if (!copied.isEmpty())
        message += QLatin1Char(' ') + copied.join(QLatin1Char(' '));
    m_messageLabel->showMessage(message, copied.isEmpty() ? 4000 : 0);
    if (!inlined.isEmpty()) {
        auto *box = plainMessageBox(QMessageBox::Information, tr("AttnScope"),
                                    tr("Saved %1; some matrices are written in it now instead of as their .npy files:")
                                        .arg(QFileInfo(path).fileName()),
                                    QMessageBox::Ok, this);
        box->setObjectName(QStringLiteral("saveNotesBox"));
        setPlainInformativeText(box, inlined.join(QLatin1Char('\n'))); // paths and messages from files
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
    return true;
}

QString MainWindow::referenceNoteText(const ReferenceNote &note)
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

void MainWindow::showError(const QString &message)
{
    m_lastError = message;
    m_messageLabel->showMessage(message);
    // Window-modal but not blocking: the event loop (and the tests) go on.
    auto *box = plainMessageBox(QMessageBox::Warning, tr("AttnScope"), message, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("errorBox"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

bool MainWindow::maybeSave()
{
    if (!m_document || !m_document->isModified())
        return true;
    const std::unique_ptr<QMessageBox> box(
        plainMessageBox(QMessageBox::Warning, tr("AttnScope"),
                        tr("\u201c%1\u201d has unsaved changes. Save them?").arg(m_document->displayName()),
                        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, this));
    box->setObjectName(QStringLiteral("saveChangesBox"));
    const auto answer = QMessageBox::StandardButton(box->exec());
    if (answer == QMessageBox::Save)
        return save();
    return answer == QMessageBox::Discard;
}

void MainWindow::open()
{
    if (!maybeSave())
        return;
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open project or attention file"), m_lastDir, openFilter());
    if (!path.isEmpty())
        openFile(path);
}

bool MainWindow::save()
{
    if (!m_document)
        return false;
    if (m_document->filePath().isEmpty())
        return saveAs();
    return saveTo(m_document->filePath());
}

bool MainWindow::saveAs()
{
    if (!m_document)
        return false;
    QString suggested = m_document->filePath();
    if (suggested.isEmpty())
        suggested = QDir(m_lastDir).filePath(tr("untitled") + QStringLiteral(".attnscope.json"));
    const QString path = QFileDialog::getSaveFileName(this, tr("Save project"), suggested, projectFilter());
    return !path.isEmpty() && saveTo(path);
}

void MainWindow::addRecentFile(const QString &path)
{
    QSettings settings;
    QStringList recent = settings.value(QLatin1String(kRecentKey)).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecent)
        recent.removeLast();
    settings.setValue(QLatin1String(kRecentKey), recent);
}

void MainWindow::fillRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(QLatin1String(kRecentKey)).toStringList();
    for (const QString &path : recent) {
        m_recentMenu
            ->addAction(QFileInfo(path).fileName(), this,
                        [this, path] {
                            if (maybeSave())
                                openFile(path);
                        })
            ->setToolTip(plainToolTip(path));
    }
    if (recent.isEmpty())
        m_recentMenu->addAction(tr("(none)"))->setEnabled(false);
}

void MainWindow::fillExamplesMenu()
{
    // Loose examples at the top; each tutorial's in a submenu titled "中文 — English" by its files
    // (the titles are data, in both languages at once, so they are not translated).
    QMap<QString, QMenu *> groups;
    for (const ExampleEntry &e : builtInExamples()) {
        QMenu *menu = m_examplesMenu;
        if (!e.group.isEmpty()) {
            if (!groups.contains(e.group)) {
                if (groups.isEmpty())
                    m_examplesMenu->addSeparator();
                groups.insert(e.group, m_examplesMenu->addMenu(e.group));
            }
            menu = groups.value(e.group);
        }
        const QString path = e.path;
        menu->addAction(e.title, this,
                        [this, path] {
                            if (maybeSave())
                                openExample(path);
                        })
            ->setData(path);
    }
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    writeSettings();
    // Saved or discarded on purpose: nothing to recover.
    m_autosaver->removeCopy();
    event->accept();
}

bool MainWindow::offerRecovery(std::optional<bool> answer)
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
                                    QMessageBox::NoButton, this));
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
                                QMessageBox::NoButton, this));
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
        m_messageLabel->showMessage(tr("Recovered unsaved changes to %1").arg(name), 8000);
        return true; // the others stay for the next start
    }
    return false;
}

void MainWindow::dragEnterEvent(QDragEnterEvent *event)
{
    const auto urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.first().isLocalFile())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent *event)
{
    const auto urls = event->mimeData()->urls();
    if (urls.isEmpty() || !urls.first().isLocalFile())
        return;
    event->acceptProposedAction();
    if (maybeSave())
        openFile(urls.first().toLocalFile());
}

void MainWindow::readSettings()
{
    QSettings settings;
    if (!restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray()))
        placeForFirstRun(this, findChild<QDockWidget *>(QStringLiteral("ModelDock")),
                         findChild<QDockWidget *>(QStringLiteral("MaskDock")));
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    m_lastDir =
        settings
            .value(QStringLiteral("files/lastDir"), QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation))
            .toString();
    if (auto kind = ColorMap::fromKey(settings.value(QStringLiteral("view/colorMap")).toString()))
        setColorMap(*kind);
    const int backend = settings.value(QStringLiteral("compute/backend"), int(BackendRequest::Auto)).toInt();
    setBackend(BackendRequest(std::clamp(backend, 0, 2)),
               settings.value(QStringLiteral("compute/vulkanDevice")).toString());
}

void MainWindow::writeSettings()
{
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    // A read-only document hid the editors: the layout to keep is the one from before.
    if (!m_attention)
        settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("files/lastDir"), m_lastDir);
    settings.setValue(QStringLiteral("view/colorMap"),
                      ColorMap::key(ColorMapKind(m_colorMapBox->currentData().toInt())));
    settings.setValue(QStringLiteral("compute/backend"), int(m_compute->backendRequest()));
    settings.setValue(QStringLiteral("compute/vulkanDevice"), m_compute->vulkanDevice());
}

} // namespace attnscope
