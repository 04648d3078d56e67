// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/launchdock.h"
#include "app/document.h"
#include "core/error.h"
#include "core/launch_import.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QMainWindow>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QVBoxLayout>

namespace paralens {
namespace {

QString frameworkLabel(LaunchFramework f)
{
    switch (f) {
    case LaunchFramework::Megatron:
        return QObject::tr("Megatron-LM");
    case LaunchFramework::MegatronBridge:
        return QObject::tr("Megatron-Bridge");
    case LaunchFramework::Torchtitan:
        return QObject::tr("torchtitan");
    case LaunchFramework::DeepSpeed:
        return QObject::tr("DeepSpeed");
    }
    return {};
}

} // namespace

LaunchDock::LaunchDock(QMainWindow* window, Document* doc)
    : QObject(window), m_doc(doc), m_dock(new QDockWidget(tr("Launch"), window)),
      m_framework(new QComboBox), m_file(new QComboBox), m_warnings(new QLabel),
      m_text(new QPlainTextEdit), m_copy(new QPushButton(tr("Copy"))),
      m_save(new QPushButton(tr("Save…"))),
      m_import(new QAction(tr("Import &Launch Config…"), this))
{
    auto* content = new QWidget;
    auto* column = new QVBoxLayout(content);
    auto* row = new QHBoxLayout;
    for (LaunchFramework f : kAllLaunchFrameworks)
        m_framework->addItem(frameworkLabel(f), int(f));
    m_framework->setAccessibleName(tr("Framework"));
    m_file->setAccessibleName(tr("File"));
    // Two rows that shrink with the dock (combos elide, the buttons keep their own row), so the
    // Copy and Save buttons stay on screen in a dock of 240 pixels.
    for (QComboBox* box : {m_framework, m_file}) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(8);
    }
    row->addWidget(m_framework, 1);
    row->addWidget(m_file, 1);
    column->addLayout(row);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_copy);
    buttons->addWidget(m_save);
    buttons->addStretch(1);
    column->addLayout(buttons);
    m_warnings->setWordWrap(true);
    m_warnings->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_warnings->setAccessibleName(tr("Settings the framework cannot express"));
    column->addWidget(m_warnings);
    m_text->setReadOnly(true);
    m_text->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_text->setAccessibleName(tr("Launch configuration"));
    m_text->setMinimumWidth(160); // scrolls sideways rather than widening the window
    column->addWidget(m_text, 1);

    m_dock->setObjectName(QStringLiteral("LaunchDock"));
    m_dock->setWidget(content);
    window->addDockWidget(Qt::RightDockWidgetArea, m_dock);
    m_dock->hide(); // opened from View ▸ Launch, like the tool docks
    m_dock->toggleViewAction()->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_L));

    connect(m_framework, &QComboBox::currentIndexChanged, this, &LaunchDock::rebuild);
    connect(m_file, &QComboBox::currentIndexChanged, this, &LaunchDock::showFile);
    connect(m_copy, &QPushButton::clicked, this, &LaunchDock::copy);
    connect(m_save, &QPushButton::clicked, this, &LaunchDock::saveDialog);
    connect(m_import, &QAction::triggered, this, &LaunchDock::importDialog);
    connect(m_doc, &Document::scenarioChanged, this, &LaunchDock::rebuild);
    rebuild();
}

void LaunchDock::setFramework(LaunchFramework f)
{
    m_framework->setCurrentIndex(m_framework->findData(int(f)));
}

LaunchFramework LaunchDock::framework() const
{
    return static_cast<LaunchFramework>(m_framework->currentData().toInt());
}

QString LaunchDock::shownText() const
{
    return m_text->toPlainText();
}

void LaunchDock::rebuild()
{
    m_config = launchConfig(m_doc->scenario(), framework());
    const int keep = m_file->currentIndex();
    {
        const QSignalBlocker block(m_file);
        m_file->clear();
        for (const auto& f : m_config.files)
            m_file->addItem(QString::fromStdString(f.name));
        m_file->setCurrentIndex(keep >= 0 && keep < m_file->count() ? keep : 0);
    }
    m_file->setEnabled(m_file->count() > 1);
    QStringList lines;
    for (const auto& w : m_config.warnings)
        lines << QStringLiteral("⚠ <b>%1</b>: %2")
                     .arg(QString::fromStdString(w.id).toHtmlEscaped(),
                          QString::fromStdString(w.message).toHtmlEscaped());
    m_warnings->setText(lines.join("<br>"));
    m_warnings->setVisible(!lines.isEmpty());
    showFile();
}

void LaunchDock::showFile()
{
    const int i = m_file->currentIndex();
    if (i < 0 || i >= int(m_config.files.size()))
        return;
    m_text->setPlainText(QString::fromStdString(m_config.files[std::size_t(i)].text));
}

void LaunchDock::copy()
{
    QApplication::clipboard()->setText(shownText());
}

bool LaunchDock::saveTo(const QString& path, QString* error)
{
    QSaveFile f(path);
    const QByteArray bytes = shownText().toUtf8();
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit()) {
        *error = path + ": " + f.errorString();
        return false;
    }
    return true;
}

void LaunchDock::saveDialog()
{
    const int i = std::max(0, m_file->currentIndex());
    const QString name = i < int(m_config.files.size())
                             ? QString::fromStdString(m_config.files[std::size_t(i)].name)
                             : QString();
    const QString path = QFileDialog::getSaveFileName(m_dock, tr("Save launch file"), name);
    if (path.isEmpty())
        return;
    QString error;
    if (!saveTo(path, &error))
        emit failed(tr("Cannot save the launch file: %1").arg(error));
}

bool LaunchDock::importFile(const QString& path, QString* error)
{
    try {
        const LaunchImport imported = importLaunchFile(path.toStdString(), {}, m_doc->presets());
        m_doc->edit(imported.scenario, QStringLiteral("import launch config"));
        return true;
    } catch (const InputError& e) {
        *error = QString::fromStdString(e.what());
        return false;
    }
}

void LaunchDock::importDialog()
{
    const QString path =
        QFileDialog::getOpenFileName(m_dock, tr("Import launch config"), QString(),
                                     tr("Launch files (*.sh *.toml *.json *.txt);;All files (*)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!importFile(path, &error))
        emit failed(tr("Cannot import the launch file: %1").arg(error));
}

} // namespace paralens
