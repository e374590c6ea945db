#pragma once

#include "core/attention/AttentionTrace.h"
#include "core/formats/ProjectFile.h"

#include <QString>
#include <QTextStream>

namespace attnscope {

// Prints the computation step by step, as the tutorials do: each tensor with its name,
// formula and shape, its values when small enough to read in a terminal.
void printPipeline(QTextStream &out, const Project &project, const AttentionTrace &trace, int precision = 4);

// One matrix, with optional row labels; elides rows and columns beyond maxRows/maxCols.
void printMatrix(QTextStream &out, const MatrixF &m, const std::vector<std::string> &rowLabels, int precision,
                 Eigen::Index maxRows = 12, Eigen::Index maxCols = 10);

} // namespace attnscope
