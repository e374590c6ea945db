#include "core/attention/Rope.h"

#include <cmath>

namespace attnscope {

std::vector<double> ropeFrequencies(const RopeSpec &rope, int headDimQK)
{
    if (!rope.frequencies.empty())
        return rope.frequencies;
    std::vector<double> theta(size_t(headDimQK / 2));
    for (size_t i = 0; i < theta.size(); ++i)
        theta[i] = std::pow(rope.base, -2.0 * double(i) / double(headDimQK));
    return theta;
}

RopeTable ropeTable(const std::vector<std::int64_t> &positions, const RopeSpec &rope, int headDimQK)
{
    const std::vector<double> theta = ropeFrequencies(rope, headDimQK);
    const Eigen::Index rows = Eigen::Index(positions.size()), half = Eigen::Index(theta.size());
    RopeTable t{MatrixF(rows, half), MatrixF(rows, half)};
    for (Eigen::Index r = 0; r < rows; ++r)
        for (Eigen::Index i = 0; i < half; ++i) {
            const double angle = double(positions[size_t(r)]) * theta[size_t(i)];
            t.cos(r, i) = float(std::cos(angle) * rope.scaling);
            t.sin(r, i) = float(std::sin(angle) * rope.scaling);
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

void applyHeadNorm(MatrixF &x, const VectorF &weight, int heads, int headDimQK, double eps)
{
    for (Eigen::Index r = 0; r < x.rows(); ++r)
        for (int h = 0; h < heads; ++h) {
            auto part = x.row(r).segment(Eigen::Index(h) * headDimQK, headDimQK);
            double squares = 0.0;
            for (Eigen::Index i = 0; i < headDimQK; ++i)
                squares += double(part(i)) * double(part(i));
            const float inv = float(1.0 / std::sqrt(squares / double(headDimQK) + eps));
            part = (part.array() * inv * weight.array()).matrix();
        }
}

} // namespace attnscope
