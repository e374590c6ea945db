#include "core/attention/Rope.h"

#include <cmath>

namespace attnscope {

std::vector<double> ropeFrequencies(double base, int headDimQK)
{
    std::vector<double> theta(size_t(headDimQK / 2));
    for (size_t i = 0; i < theta.size(); ++i)
        theta[i] = std::pow(base, -2.0 * double(i) / double(headDimQK));
    return theta;
}

RopeTable ropeTable(const std::vector<std::int64_t> &positions, double base, int headDimQK)
{
    const std::vector<double> theta = ropeFrequencies(base, headDimQK);
    const Eigen::Index rows = Eigen::Index(positions.size()), half = Eigen::Index(theta.size());
    RopeTable t{MatrixF(rows, half), MatrixF(rows, half)};
    for (Eigen::Index r = 0; r < rows; ++r)
        for (Eigen::Index i = 0; i < half; ++i) {
            const double angle = double(positions[size_t(r)]) * theta[size_t(i)];
            t.cos(r, i) = float(std::cos(angle));
            t.sin(r, i) = float(std::sin(angle));
        }
    return t;
}

void applyRope(MatrixF &x, const RopeTable &table, int heads, int headDimQK)
{
    const Eigen::Index half = headDimQK / 2;
    for (Eigen::Index r = 0; r < x.rows(); ++r)
        for (int h = 0; h < heads; ++h) {
            const Eigen::Index c = Eigen::Index(h) * headDimQK;
            for (Eigen::Index i = 0; i < half; ++i) {
                const float a = x(r, c + i), b = x(r, c + i + half);
                const float cs = table.cos(r, i), sn = table.sin(r, i);
                x(r, c + i) = a * cs - b * sn;
                x(r, c + i + half) = b * cs + a * sn;
            }
        }
}

} // namespace attnscope
