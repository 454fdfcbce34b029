// SPDX-License-Identifier: MIT
#include <QtTest>
class TstServing : public QObject {
    Q_OBJECT
private slots:
    void placeholder() { QVERIFY(true); }
};
QTEST_APPLESS_MAIN(TstServing)
#include "tst_serving.moc"
