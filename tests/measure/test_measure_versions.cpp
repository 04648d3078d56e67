// SPDX-License-Identifier: GPL-3.0-or-later
// The version codes CUDA and NCCL report, against their documented encodings:
// cudaRuntimeGetVersion is 1000 * major + 10 * minor (CUDA Runtime API reference);
// NCCL_VERSION(X, Y, Z) is X * 10000 + Y * 100 + Z from NCCL 2.9 on, X * 1000 + Y * 100 + Z
// before (nccl.h).
#include "measure/versions.h"

#include <QTest>

using namespace paralens::measure;

class TestMeasureVersions : public QObject
{
    Q_OBJECT
private slots:
    void cuda()
    {
        QCOMPARE(cudaVersionString(13000), std::string("13.0"));
        QCOMPARE(cudaVersionString(12040), std::string("12.4"));
        QCOMPARE(cudaVersionString(11080), std::string("11.8"));
        QCOMPARE(cudaVersionString(12090), std::string("12.9"));
        QCOMPARE(cudaVersionString(0), std::string()); // no driver
    }
    void nccl()
    {
        QCOMPARE(ncclVersionString(22809), std::string("2.28.9"));
        QCOMPARE(ncclVersionString(21805), std::string("2.18.5"));
        QCOMPARE(ncclVersionString(2804), std::string("2.8.4"));
        QCOMPARE(ncclVersionString(0), std::string());
    }
};

QTEST_GUILESS_MAIN(TestMeasureVersions)
#include "test_measure_versions.moc"
