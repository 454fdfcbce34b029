// SPDX-License-Identifier: MIT
#include "svg_fonts.h"

#include <QFontDatabase>
#include <QRegularExpression>
#include <QString>
#include <QStringList>

namespace vramlab {

namespace {

bool isGeneric(QString family)
{
    static const QStringList generic = { "serif", "sans-serif", "monospace", "cursive", "fantasy", "system-ui",
        "ui-serif", "ui-sans-serif", "ui-monospace", "ui-rounded", "math", "emoji", "fangsong" };
    return generic.contains(family.trimmed().toLower());
}

QString xmlUnescaped(QString s)
{
    s.replace(QLatin1String("&quot;"), QLatin1String("\""));
    s.replace(QLatin1String("&apos;"), QLatin1String("'"));
    s.replace(QLatin1String("&lt;"), QLatin1String("<"));
    s.replace(QLatin1String("&gt;"), QLatin1String(">"));
    return s.replace(QLatin1String("&amp;"), QLatin1String("&"));
}

/// One family name as a CSS string: quoted, so digits, commas or quotes in it stay a name.
QString cssString(QString name)
{
    name.replace(QLatin1Char('\\'), QLatin1String("\\\\")).replace(QLatin1Char('\''), QLatin1String("\\'"));
    return QLatin1Char('\'') + name + QLatin1Char('\'');
}

/// The attribute's value with a generic family last: Qt writes one bare family name; a value
/// that is already a CSS list is kept as written.
QString withGeneric(const QString& value)
{
    QString css = value.trimmed();
    if (css.isEmpty() || isGeneric(css.section(QLatin1Char(','), -1)))
        return css.isEmpty() ? QStringLiteral("sans-serif") : css;
    const bool list
        = css.contains(QLatin1Char(',')) || css.startsWith(QLatin1Char('\'')) || css.startsWith(QLatin1Char('"'));
    QString first = css.section(QLatin1Char(','), 0, 0).trimmed();
    if (list)
        first.remove(QLatin1Char('\'')).remove(QLatin1Char('"'));
    else
        css = cssString(css);
    return css + (QFontDatabase::isFixedPitch(first) ? QStringLiteral(", monospace") : QStringLiteral(", sans-serif"));
}

/// `regex`'s matches in `text` replaced by what `replace` makes of each.
template <typename F> QString replaced(const QString& text, const QRegularExpression& regex, F replace)
{
    QString out;
    qsizetype last = 0;
    for (QRegularExpressionMatchIterator it = regex.globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        out += QStringView(text).mid(last, m.capturedStart() - last);
        out += replace(m);
        last = m.capturedEnd();
    }
    out += QStringView(text).mid(last);
    return out;
}

} // namespace

QByteArray withGenericFontFamilies(const QByteArray& svg)
{
    // Attributes inside start tags only: text (a scenario's name) may read font-family='…' too,
    // but it never holds a raw "<", so a tag match never starts inside it.
    static const QRegularExpression tag(QStringLiteral(R"(<[A-Za-z][^<>]*>)"));
    static const QRegularExpression attribute(QStringLiteral(R"re((\s)font-family=(?:"([^"]*)"|'([^']*)'))re"));
    const QString out = replaced(QString::fromUtf8(svg), tag, [](const QRegularExpressionMatch& t) {
        return replaced(t.captured(), attribute, [](const QRegularExpressionMatch& a) {
            const QString raw = a.capturedStart(2) >= 0 ? a.captured(2) : a.captured(3);
            return a.captured(1)
                + QStringLiteral("font-family=\"%1\"").arg(withGeneric(xmlUnescaped(raw)).toHtmlEscaped());
        });
    });
    return out.toUtf8();
}

} // namespace vramlab
