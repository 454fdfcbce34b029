// SPDX-License-Identifier: MIT
#include "export_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

namespace vramlab {

ExportDialog::ExportDialog(
    const QString& chartName, const QString& suggestedPath, bool dark, PdfPage page, QWidget* parent)
    : QDialog(parent)
    , m_path(new QLineEdit(suggestedPath))
    , m_width(new QSpinBox)
    , m_height(new QSpinBox)
    , m_theme(new QComboBox)
    , m_page(new QComboBox)
    , m_pageLabel(new QLabel(QStringLiteral("Page")))
{
    m_formats
        = new QLabel(QStringLiteral(".png (2x), .svg and .pdf: the chart; .csv: its data; .md: review report with "
                                    "images; .html: self-contained review report"));
    m_formats->setWordWrap(true);
    setWindowTitle(QStringLiteral("Export %1").arg(chartName));
    auto* form = new QFormLayout(this);
    auto* pathRow = new QHBoxLayout;
    auto* browse = new QPushButton(QStringLiteral("Browse…"));
    pathRow->addWidget(m_path, 1);
    pathRow->addWidget(browse);
    form->addRow(QStringLiteral("File"), pathRow);
    form->addRow(m_formats);
    for (QSpinBox* s : { m_width, m_height }) {
        s->setRange(100, 10000);
        s->setSuffix(QStringLiteral(" px"));
    }
    m_width->setValue(1600);
    m_height->setValue(900);
    form->addRow(QStringLiteral("Width"), m_width);
    form->addRow(QStringLiteral("Height"), m_height);
    m_theme->addItems({ QStringLiteral("Light"), QStringLiteral("Dark") });
    m_theme->setCurrentIndex(dark ? 1 : 0);
    form->addRow(QStringLiteral("Theme"), m_theme);
    // Item data is the --page name, so the choice and the command line read alike.
    m_page->addItem(QStringLiteral("16:9 slide (the chart fills it)"), pdfPageName(PdfPage::Slide));
    m_page->addItem(QStringLiteral("A4 page"), pdfPageName(PdfPage::A4));
    m_page->addItem(QStringLiteral("Letter page"), pdfPageName(PdfPage::Letter));
    m_page->setCurrentIndex(m_page->findData(pdfPageName(page)));
    form->addRow(m_pageLabel, m_page);
    auto showPage = [this] {
        const bool pdf = offersPage();
        m_pageLabel->setVisible(pdf);
        m_page->setVisible(pdf);
    };
    connect(m_path, &QLineEdit::textChanged, this, showPage);
    showPage();
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(QStringLiteral("Export"));
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString p = QFileDialog::getSaveFileName(this, QStringLiteral("Export to"), m_path->text(),
            QStringLiteral("PNG (*.png);;SVG (*.svg);;PDF (*.pdf);;CSV (*.csv);;"
                           "Markdown report (*.md);;HTML report (*.html)"));
        if (!p.isEmpty())
            m_path->setText(p);
    });
}

QString ExportDialog::path() const
{
    return m_path->text();
}
QSize ExportDialog::size() const
{
    return { m_width->value(), m_height->value() };
}
void ExportDialog::setFormatsNote(const QString& text)
{
    m_formats->setText(text);
}
QString ExportDialog::formatsNote() const
{
    return m_formats->text();
}
bool ExportDialog::dark() const
{
    return m_theme->currentIndex() == 1;
}
PdfPage ExportDialog::pdfPage() const
{
    return parsePdfPage(m_page->currentData().toString()).value_or(PdfPage::Slide);
}
void ExportDialog::setPath(const QString& path)
{
    m_path->setText(path);
}
bool ExportDialog::offersPage() const
{
    return m_path->text().trimmed().endsWith(QLatin1String(".pdf"), Qt::CaseInsensitive);
}

} // namespace vramlab
