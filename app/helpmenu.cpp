// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/helpmenu.h"

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFile>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QScrollBar>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <QWhatsThis>

namespace paralens {

HelpMenu::HelpMenu(QWidget* window, QMenu* menu) : QObject(window), m_window(window)
{
    QAction* guide = menu->addAction(tr("&User Guide"), this, [this] { showGuide(); });
    guide->setShortcut(QKeySequence::HelpContents);
    guide->setObjectName(QStringLiteral("UserGuideAction"));
    QAction* whatsThis = QWhatsThis::createAction(menu);
    whatsThis->setText(tr("What's &This?"));
    menu->addAction(whatsThis);
    menu->addSeparator();
    menu->addAction(tr("&About ParaLens"), this, &HelpMenu::showAbout);
    menu->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

QString HelpMenu::guideText()
{
    QFile file(QStringLiteral(":/help/user-guide.md"));
    if (!file.open(QIODevice::ReadOnly))
        return tr("The user guide is missing from this build.");
    return QString::fromUtf8(file.readAll());
}

QDialog* HelpMenu::showGuide()
{
    if (!m_guide) {
        m_guide = new QDialog(m_window);
        m_guide->setObjectName(QStringLiteral("UserGuide"));
        m_guide->setWindowTitle(tr("ParaLens User Guide"));
        auto* text = new QTextBrowser(m_guide);
        text->setObjectName(QStringLiteral("UserGuideText"));
        text->setOpenExternalLinks(true);
        text->setMarkdown(guideText());
        text->setAccessibleName(tr("User guide"));
        auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, m_guide);
        connect(buttons, &QDialogButtonBox::rejected, m_guide, &QDialog::close);
        auto* column = new QVBoxLayout(m_guide);
        column->addWidget(text);
        column->addWidget(buttons);
        m_guide->resize(640, 560);
        fillWhatsThis(m_guide);
    }
    m_guide->show();
    m_guide->raise();
    m_guide->activateWindow();
    return m_guide;
}

void HelpMenu::showAbout()
{
    auto* box = new QMessageBox(QMessageBox::Information, tr("About ParaLens"),
                                tr("<h3>ParaLens %1</h3><p>Explore how a transformer trains on "
                                   "a GPU cluster: memory, step time, topology and pipeline "
                                   "schedules, from one model shared by the window and the "
                                   "command line.</p><p>Licence: GPL-3.0-or-later. Charts drawn "
                                   "with QCustomPlot.</p>")
                                    .arg(QApplication::applicationVersion()),
                                QMessageBox::Ok, m_window);
    box->setObjectName(QStringLiteral("AboutBox"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

bool isUserControl(const QWidget* w)
{
    // Scroll bars, a table's corner and Qt's own overflow buttons are parts of other widgets.
    return !qobject_cast<const QScrollBar*>(w) &&
           !w->objectName().startsWith(QLatin1String("qt_")) &&
           qstrcmp(w->metaObject()->className(), "QTableCornerButton") != 0;
}

void fillWhatsThis(QWidget* root)
{
    for (QWidget* w : root->findChildren<QWidget*>()) {
        if (!isUserControl(w))
            continue;
        const bool control = qobject_cast<QAbstractButton*>(w) || qobject_cast<QComboBox*>(w) ||
                             qobject_cast<QAbstractSpinBox*>(w) ||
                             qobject_cast<QAbstractSlider*>(w) || qobject_cast<QLineEdit*>(w) ||
                             qobject_cast<QAbstractItemView*>(w);
        if (!control || !w->whatsThis().isEmpty())
            continue;
        QString text = w->toolTip();
        for (QWidget* up = w->parentWidget(); text.isEmpty() && up && up != root;
             up = up->parentWidget())
            text = up->toolTip(); // a slider's tip sits on its SnapSlider
        if (text.isEmpty())
            text = w->accessibleName();
        if (text.isEmpty())
            if (auto* button = qobject_cast<QAbstractButton*>(w))
                text = button->text().remove(QLatin1Char('&'));
        w->setWhatsThis(text);
    }
}

} // namespace paralens
