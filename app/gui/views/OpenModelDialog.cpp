#include "app/gui/views/OpenModelDialog.h"

#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPointer>
#include <QPushButton>
#include <QThread>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace attnscope {

namespace {

enum Column { Name, Family, Size, Status, ColumnCount };

} // namespace

OpenModelDialog::OpenModelDialog(const QString &hubDir, const QString &startDir, QWidget *parent)
    : QDialog(parent), m_hubDir(hubDir), m_startDir(startDir), m_alive(std::make_shared<bool>(true)),
      m_where(new QLabel(this)), m_list(new QTreeWidget(this))
{
    setObjectName(QStringLiteral("openModelDialog"));
    setWindowTitle(tr("Open Model"));
    m_where->setObjectName(QStringLiteral("hubCacheLabel"));
    m_where->setWordWrap(true);
    m_where->setText(
        tr("Looking for models in the Hugging Face cache, %1\u2026").arg(QDir::toNativeSeparators(hubDir)));
    m_list->setObjectName(QStringLiteral("cachedModels"));
    m_list->setColumnCount(ColumnCount);
    m_list->setHeaderLabels({tr("Model"), tr("Family"), tr("Size"), tr("Can AttnScope open it?")});
    m_list->setRootIsDecorated(false);
    m_list->setUniformRowHeights(true);
    m_list->setAlternatingRowColors(true);
    m_list->header()->setStretchLastSection(true);

    auto *buttons = new QDialogButtonBox(this);
    m_open = buttons->addButton(tr("Open"), QDialogButtonBox::AcceptRole);
    m_open->setObjectName(QStringLiteral("openCachedModel"));
    m_open->setEnabled(false);
    QPushButton *folder = buttons->addButton(tr("Open &Folder\u2026"), QDialogButtonBox::ActionRole);
    folder->setObjectName(QStringLiteral("openModelFolder"));
    buttons->addButton(QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_open, &QPushButton::clicked, this, &OpenModelDialog::openSelected);
    connect(m_list, &QTreeWidget::itemDoubleClicked, this, &OpenModelDialog::openSelected);
    connect(m_list, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem *item) {
        const int row = item ? m_list->indexOfTopLevelItem(item) : -1;
        m_open->setEnabled(row >= 0 && m_models[std::size_t(row)].openable);
    });
    chooseFolder = [this] { return QFileDialog::getExistingDirectory(this, tr("Open a Model Folder"), m_startDir); };
    connect(folder, &QPushButton::clicked, this, [this] {
        const QString dir = chooseFolder();
        if (dir.isEmpty())
            return;
        m_chosen = dir;
        accept();
    });

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_where);
    layout->addWidget(m_list, 1);
    layout->addWidget(buttons);
    resize(760, 420);

    // Reading every snapshot's links and config.json is quick for a few models but not for a large
    // cache on a network disk: a worker thread scans, the GUI thread shows.
    QPointer<OpenModelDialog> self(this);
    std::weak_ptr<bool> alive = m_alive;
    QThread *worker = QThread::create([self, alive, hubDir] {
        auto models = scanHubCache(hubDir);
        if (alive.expired())
            return;
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [self, models = std::move(models)]() mutable {
                if (self)
                    self->showModels(std::move(models));
            },
            Qt::QueuedConnection);
    });
    connect(worker, &QThread::finished, worker, &QObject::deleteLater);
    worker->start();
}

OpenModelDialog::~OpenModelDialog() = default;

QString OpenModelDialog::sizeText(std::int64_t bytes)
{
    return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeTraditionalFormat);
}

void OpenModelDialog::showModels(std::vector<CachedModel> models)
{
    m_models = std::move(models);
    m_scanned = true;
    m_where->setText(m_models.empty()
                         ? tr("No models in the Hugging Face cache, %1. Open a folder instead.")
                               .arg(QDir::toNativeSeparators(m_hubDir))
                         : tr("Models in the Hugging Face cache, %1:").arg(QDir::toNativeSeparators(m_hubDir)));
    m_list->clear();
    for (const CachedModel &m : m_models) {
        auto *item = new QTreeWidgetItem(m_list);
        item->setText(Name, m.name);
        item->setToolTip(Name, tr("%1\nrevision %2").arg(QDir::toNativeSeparators(m.path), m.revision));
        item->setText(Family, m.family.isEmpty() ? tr("unknown") : m.family);
        item->setText(Size, sizeText(m.bytes));
        item->setTextAlignment(Size, Qt::AlignRight | Qt::AlignVCenter);
        item->setText(Status, m.openable ? tr("Yes") : m.whyNot);
        item->setToolTip(Status, m.openable ? tr("AttnScope can open this model") : m.whyNot);
        if (!m.openable)
            for (int c = 0; c < ColumnCount; ++c)
                item->setForeground(c, palette().color(QPalette::Disabled, QPalette::Text));
    }
    for (int c = 0; c < Status; ++c)
        m_list->resizeColumnToContents(c);
    for (std::size_t i = 0; i < m_models.size(); ++i)
        if (m_models[i].openable) {
            m_list->setCurrentItem(m_list->topLevelItem(int(i)));
            break;
        }
}

void OpenModelDialog::openSelected()
{
    const int row = m_list->currentItem() ? m_list->indexOfTopLevelItem(m_list->currentItem()) : -1;
    if (row < 0 || !m_models[std::size_t(row)].openable)
        return;
    m_chosen = m_models[std::size_t(row)].path;
    accept();
}

} // namespace attnscope
