// SPDX-License-Identifier: MIT
#pragma once

#include "pdf_page.h"

#include <QDialog>
#include <QSize>

class QLineEdit;
class QSpinBox;
class QComboBox;
class QLabel;

namespace vramlab {

/// File > Export: where to (the extension picks the format), the picture's size and theme,
/// and a PDF's page (shown while the file is a .pdf).
class ExportDialog : public QDialog {
    Q_OBJECT
public:
    ExportDialog(const QString& chartName, const QString& suggestedPath, bool dark, PdfPage page = PdfPage::Slide,
        QWidget* parent = nullptr);
    QString path() const;
    QSize size() const;
    bool dark() const;
    PdfPage pdfPage() const;
    void setPath(const QString& path);
    /// True while the page choice is offered (the file is a .pdf).
    bool offersPage() const;
    /// Replaces the line that says what each extension writes (the Plan tab: a table).
    void setFormatsNote(const QString& text);
    QString formatsNote() const;

private:
    QLabel* m_formats;
    QLineEdit* m_path;
    QSpinBox* m_width;
    QSpinBox* m_height;
    QComboBox* m_theme;
    QComboBox* m_page;
    QLabel* m_pageLabel;
};

} // namespace vramlab
