// SPDX-License-Identifier: MIT
// User strings in reports and CSV (issue 17): a name is shown as itself, never as Markdown
// markup, a link, a table cell or a spreadsheet formula.
#include "vramlab/estimator.h"
#include "vramlab/report_text.h"
#include "vramlab/scenario_io.h"
#include "vramlab/text_escape.h"

#include <QtTest>

using namespace vramlab;
using nlohmann::json;

namespace {

const std::string kEvil = "x | y **b** [l](javascript:alert(1)) <script>\n# h";

/// Unescaped pipes: the cell borders a Markdown reader sees.
int borders(const std::string& line)
{
    int n = 0;
    for (size_t i = 0; i < line.size(); ++i)
        if (line[i] == '|' && (i == 0 || line[i - 1] != '\\'))
            ++n;
    return n;
}

} // namespace

class TestTextEscape : public QObject {
    Q_OBJECT
private slots:
    void markdownEscapesEveryMarkupCharacter()
    {
        QCOMPARE(markdownEscape("a*b_c`d[e](f)#g|h<i>!j.k-l+m{n}\\o"),
            std::string("a\\*b\\_c\\`d\\[e\\]\\(f\\)\\#g\\|h\\<i\\>\\!j\\.k\\-l\\+m\\{n\\}\\\\o"));
        QCOMPARE(markdownEscape("one\ntwo\r\nthree"), std::string("one two  three"));
        QCOMPARE(markdownEscape("plain words"), std::string("plain words"));
        QCOMPARE(markdownLinkTarget("r_files/breakdown.png"), std::string("r_files/breakdown.png"));
        QCOMPARE(markdownLinkTarget("a b)(<x>/c.png"), std::string("a%20b%29%28%3Cx%3E/c.png"));
    }

    void csvNeutralizesFormulasButNotNumbers()
    {
        QCOMPARE(
            csvField("=HYPERLINK(\"http://x\",\"y\")"), std::string("\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""));
        QCOMPARE(csvField("+1+2 cmd"), std::string("'+1+2 cmd"));
        QCOMPARE(csvField("-2+3+cmd|' /C calc'!A0"), std::string("'-2+3+cmd|' /C calc'!A0"));
        QCOMPARE(csvField("@SUM(A1)"), std::string("'@SUM(A1)"));
        QCOMPARE(csvField("\tx"), std::string("'\tx"));
        QCOMPARE(csvField("\rx"), std::string("\"'\rx\""));
        QCOMPARE(csvField("-12"), std::string("-12")); // numbers stay numbers
        QCOMPARE(csvField("-1.5e3"), std::string("-1.5e3"));
        QCOMPARE(csvField("+7"), std::string("+7"));
        QCOMPARE(csvField("-"), std::string("'-"));
        QCOMPARE(csvField("-inf"), std::string("'-inf"));
        QCOMPARE(csvField("a,b"), std::string("\"a,b\""));
        QCOMPARE(csvField("Optimizer states"), std::string("Optimizer states"));
    }

    void utf8Validation()
    {
        QVERIFY(isValidUtf8("plain"));
        QVERIFY(isValidUtf8("\xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
        QVERIFY(!isValidUtf8("\xFF.json"));
        QVERIFY(!isValidUtf8("\xC0\xAF")); // overlong '/'
        QVERIFY(!isValidUtf8("\xED\xA0\x80")); // a surrogate
        QVERIFY(!isValidUtf8("\xF4\x90\x80\x80")); // beyond U+10FFFF
        QVERIFY(!isValidUtf8("\xE2\x82")); // cut short
        QCOMPARE(printableText("\xFF.json"), std::string("\\xFF.json"));
    }

    void reviewMarkdownShowsNamesAsText()
    {
        json doc = json::parse(R"({"model": {"preset": "llama-3-8b"},
            "run": {"sequence_length": 2048, "gpu": {"base": "h100-sxm-80gb"}}})");
        doc["name"] = kEvil;
        doc["model"]["name"] = kEvil;
        doc["run"]["gpu"]["name"] = kEvil;
        doc["run"][kEvil] = 1; // an unknown key: named in the warnings
        const Scenario sc = readScenario(doc);
        const Report r = estimate(sc);
        const std::string md = reviewMarkdown(sc, r, { { "breakdown", "r b(1)_files/breakdown.png" } });
        QVERIFY(md.find("](javascript:") == std::string::npos);
        QVERIFY(md.find("<script>") == std::string::npos);
        QVERIFY(md.find("**b**") == std::string::npos);
        QVERIFY(md.find("\n# h") == std::string::npos); // the newline cannot start a heading
        QVERIFY(md.find("# x \\| y \\*\\*b\\*\\* \\[l\\]\\(javascript:alert\\(1\\)\\) \\<script\\> \\# h\n") == 0);
        QVERIFY(md.find("![breakdown](r%20b%281%29_files/breakdown.png)") != std::string::npos);
        // Every table keeps its column count.
        std::istringstream lines(md);
        std::string line;
        int columns = -1;
        while (std::getline(lines, line)) {
            if (line.empty() || line[0] != '|') {
                columns = -1;
                continue;
            }
            if (columns < 0)
                columns = borders(line);
            QCOMPARE(borders(line), columns);
        }
    }

    void csvWritersUseTheHelper()
    {
        const Report r
            = estimate(readScenario(json::parse(R"({"model": {"preset": "gpt2"}, "run": {"sequence_length": 512}})")));
        const std::string csv = breakdownCsv(r);
        QVERIFY(csv.find("\n=") == std::string::npos && csv.find(",=") == std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestTextEscape)
#include "tst_text_escape.moc"
