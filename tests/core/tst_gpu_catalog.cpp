// SPDX-License-Identifier: MIT
// The GPU catalog (issue 16): each added entry against the figures its source comment cites,
// unique names, every rate the model uses present, and device names matched to the added entries.
#include "vramlab/gpu_catalog.h"

#include <QtTest>

#include <set>

using namespace vramlab;

namespace {
/// The entries added for issue 16. Hand-written from the sources (gpu_catalog.cpp, README):
/// nvidia-smi "MiB" total, dense BF16 TFLOP/s (0: no BF16), and whether the GPU has FP8.
struct Added {
    const char* name;
    qint64 mib;
    double bf16;
    bool fp8;
};
constexpr Added kAdded[] = {
    { "rtx-3090-24gb", 24576, 71, false }, // GA102 whitepaper; club-3090#390
    { "rtx-3090-ti-24gb", 24564, 80, false }, // Ada whitepaper (3090 Ti column); club-3090#353
    { "rtx-4080-16gb", 16376, 97.5, true }, // Ada whitepaper Appendix A
    { "rtx-5090-32gb", 32607, 209.5, true }, // RTX Blackwell whitepaper; club-3090#741
    { "rtx-a6000-48gb", 49140, 154.8, false }, // RTX A6000 datasheet 309.7 sparse / 2
    { "rtx-6000-ada-48gb", 49140, 364.25, true }, // RTX 6000 Ada datasheet 1457.0 FP8 sparse / 4
    { "a40-48gb", 46068, 149.7, false }, // A40 datasheet
    { "l40-48gb", 46068, 181.05, true }, // L40 datasheet
    { "t4-16gb", 15360, 0, false }, // T4 datasheet (FP16 65, no BF16); modal-client#2797
    { "h100-nvl-94gb", 95830, 835.5, true }, // H100 datasheet NVL 1671 sparse / 2; gpu-admin-tools#4
    { "mi250-gcd-64gb", 65520, 181.05, false }, // ROCm MI250 docs OAM 362.1 / 2 GCDs; rocm_smi_lib#160
};
} // namespace

class TestGpuCatalog : public QObject {
    Q_OBJECT
private slots:
    void addedEntriesMatchTheirSources_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<qint64>("mib");
        QTest::addColumn<double>("bf16");
        QTest::addColumn<bool>("fp8");
        for (const Added& a : kAdded)
            QTest::newRow(a.name) << QString::fromLatin1(a.name) << a.mib << a.bf16 << a.fp8;
    }
    void addedEntriesMatchTheirSources()
    {
        QFETCH(QString, name);
        QFETCH(qint64, mib);
        QFETCH(double, bf16);
        QFETCH(bool, fp8);
        const std::optional<GpuSpec> g = findGpu(name.toStdString());
        QVERIFY(g.has_value());
        QCOMPARE(g->memoryBytes, Bytes(mib) * kMiB);
        QCOMPARE(g->bf16Tflops, bf16);
        QCOMPARE(g->fp8Tflops > 0, fp8);
    }

    // One GCD is what a PyTorch process sees: half the OAM's 362.1 (16-bit) and 90.5 (FP32 matrix).
    void mi250IsOneGcd()
    {
        const GpuSpec g = *findGpu("mi250-gcd-64gb");
        QCOMPARE(g.bf16Tflops * 2, 362.1);
        QCOMPARE(g.fp32Tflops * 2, 90.5);
        QCOMPARE(g.peakTflops(DType::Fp32), 45.25); // no TF32: FP32 GEMMs at the matrix FP32 rate
        QCOMPARE(g.peakTflops(DType::Fp8), 181.05); // no FP8: the 16-bit rate
        QCOMPARE(g.memoryBandwidthGBs * 2, 3200.0);
        QCOMPARE(findGpu("mi250")->name, std::string("mi250-gcd-64gb"));
    }

    void t4HasNoBf16AndUsesItsFp16Rate()
    {
        const GpuSpec t4 = *findGpu("t4-16gb");
        QCOMPARE(t4.fp16Tflops, 65.0);
        QCOMPARE(t4.peakTflops(DType::Bf16), 65.0);
        QCOMPARE(t4.peakTflops(DType::Fp8), 65.0);
        QCOMPARE(t4.peakTflops(DType::Fp32), 8.1); // no TF32 on Turing
    }

    void namesAreUnique()
    {
        std::set<std::string> names, displayNames;
        for (const GpuSpec& g : gpuCatalog()) {
            QVERIFY2(names.insert(g.name).second, g.name.c_str());
            QVERIFY2(displayNames.insert(g.displayName).second, g.displayName.c_str());
        }
        QVERIFY(names.size() >= 22);
    }

    void everyRateTheModelUsesIsPresent()
    {
        for (const GpuSpec& g : gpuCatalog()) {
            const char* n = g.name.c_str();
            QVERIFY2(!g.displayName.empty(), n);
            QVERIFY2(g.memoryBytes > 0 && g.memoryBytes % kMiB == 0, n);
            QVERIFY2(g.fp32Tflops > 0 && g.fp16Tflops > 0 && g.int8Tops >= 0, n);
            QVERIFY2(g.memoryBandwidthGBs > 0 && g.interconnectGBs > 0 && g.hostLinkGBs > 0, n);
            for (DType d : { DType::Fp32, DType::Bf16, DType::Fp16, DType::Fp8, DType::Int8 })
                QVERIFY2(g.peakTflops(d) > 0, n);
            // Tensor rates are never below the plain FP32 rate they fall back to.
            QVERIFY2(g.tf32Tflops == 0 || g.tf32Tflops >= g.fp32Tflops, n);
            QVERIFY2(g.bf16Tflops == 0 || g.bf16Tflops >= g.tf32Tflops, n);
            QVERIFY2(g.fp8Tflops == 0 || g.fp8Tflops >= g.bf16Tflops, n);
            QVERIFY2(g.interconnectGBs >= g.hostLinkGBs, n);
        }
        for (const Added& a : kAdded) {
            const GpuSpec g = *findGpu(a.name);
            QVERIFY2(g.int8Tops > 0, a.name); // every added GPU has INT8 tensor cores
            if (g.displayName.starts_with("NVIDIA")) // TF32 and BF16 came together (Ampere); CDNA 2 has BF16 only
                QVERIFY2((g.bf16Tflops > 0) == (g.tf32Tflops > 0), a.name);
        }
    }

    void deviceNamesMatchTheAddedEntries_data()
    {
        QTest::addColumn<QString>("device");
        QTest::addColumn<qint64>("mib");
        QTest::addColumn<QString>("expected");
        QTest::newRow("3090") << "NVIDIA GeForce RTX 3090" << qint64(24576) << "rtx-3090-24gb";
        QTest::newRow("3090 Ti") << "NVIDIA GeForce RTX 3090 Ti" << qint64(24564) << "rtx-3090-ti-24gb";
        QTest::newRow("3090 Ti, 3090's memory") << "NVIDIA GeForce RTX 3090 Ti" << qint64(24576) << "rtx-3090-ti-24gb";
        QTest::newRow("4080") << "NVIDIA GeForce RTX 4080" << qint64(16376) << "rtx-4080-16gb";
        QTest::newRow("4090 is not 4080") << "NVIDIA GeForce RTX 4090" << qint64(24564) << "rtx-4090-24gb";
        QTest::newRow("5090") << "NVIDIA GeForce RTX 5090" << qint64(32607) << "rtx-5090-32gb";
        QTest::newRow("A6000") << "NVIDIA RTX A6000" << qint64(49140) << "rtx-a6000-48gb";
        QTest::newRow("A6000 with ECC") << "NVIDIA RTX A6000" << qint64(46068) << "rtx-a6000-48gb";
        QTest::newRow("6000 Ada") << "NVIDIA RTX 6000 Ada Generation" << qint64(49140) << "rtx-6000-ada-48gb";
        QTest::newRow("A40") << "NVIDIA A40" << qint64(46068) << "a40-48gb";
        QTest::newRow("L40") << "NVIDIA L40" << qint64(46068) << "l40-48gb";
        QTest::newRow("L40S is not L40") << "NVIDIA L40S" << qint64(46068) << "l40s-48gb";
        QTest::newRow("A10 is not A10G") << "NVIDIA A10" << qint64(23028) << "a10-24gb";
        QTest::newRow("T4") << "Tesla T4" << qint64(15360) << "t4-16gb";
        QTest::newRow("H100 NVL") << "NVIDIA H100 NVL" << qint64(95830) << "h100-nvl-94gb";
        QTest::newRow("H100 NVL MIG") << "NVIDIA H100 NVL MIG 1g.12gb" << qint64(11008) << "h100-nvl-94gb";
        QTest::newRow("H100 SXM is not NVL") << "NVIDIA H100 80GB HBM3" << qint64(81559) << "h100-sxm-80gb";
        // ROCm names an MI250 or MI250X GCD alike; each is one 64 GB device.
        QTest::newRow("MI250 GCD") << "AMD Instinct MI250X/MI250" << qint64(65520) << "mi250-gcd-64gb";
        QTest::newRow("MI300X is not MI250") << "AMD Instinct MI300X" << qint64(196592) << "mi300x-192gb";
    }
    void deviceNamesMatchTheAddedEntries()
    {
        QFETCH(QString, device);
        QFETCH(qint64, mib);
        QFETCH(QString, expected);
        const std::optional<GpuSpec> g = matchGpu(device.toStdString(), Bytes(mib) * kMiB);
        QCOMPARE(QString::fromStdString(g ? g->name : std::string()), expected);
    }
};

QTEST_APPLESS_MAIN(TestGpuCatalog)
#include "tst_gpu_catalog.moc"
