#pragma once

#include "core/attention/AttentionProblem.h"

#include <vector>

namespace attnscope {

// Where each head's numbers live (design.md, "Semantics" and "Modern attention"). Every engine,
// export and view asks here which columns of Q, K, V and the context a head owns and which
// key/value head a query head reads, so grouped-query attention has one definition.
//
// Query head h owns columns [h*dK, (h+1)*dK) of Q and [h*dV, (h+1)*dV) of the context. Key/value
// head g owns columns [g*dK, (g+1)*dK) of K and [g*dV, (g+1)*dV) of V, and query head h reads
// key/value head h / (H/G) (Hugging Face's repeat_kv).
struct HeadLayout {
    int heads = 1;   // H, query heads
    int kvHeads = 1; // G, key/value heads; divides H
    int headDimQK = 1;
    int headDimV = 1;

    static HeadLayout of(const AttentionSpec &spec)
    {
        return {spec.heads, spec.keyValueHeads(), spec.headDimQK, spec.headDimV};
    }

    // Query heads per key/value head.
    int groupSize() const { return heads / kvHeads; }
    bool grouped() const { return kvHeads != heads; }
    // The key/value head query head h reads.
    int kvHeadOf(int h) const { return h / groupSize(); }
    // The query heads that read key/value head g: [firstQueryHead(g), firstQueryHead(g) + groupSize()).
    int firstQueryHead(int g) const { return g * groupSize(); }

    Eigen::Index queryColumn(int h) const { return Eigen::Index(h) * headDimQK; }
    Eigen::Index contextColumn(int h) const { return Eigen::Index(h) * headDimV; }
    Eigen::Index keyColumn(int g) const { return Eigen::Index(g) * headDimQK; }
    Eigen::Index valueColumn(int g) const { return Eigen::Index(g) * headDimV; }
    // The columns query head h reads in K and V.
    Eigen::Index keyColumnOfHead(int h) const { return keyColumn(kvHeadOf(h)); }
    Eigen::Index valueColumnOfHead(int h) const { return valueColumn(kvHeadOf(h)); }

    Eigen::Index queryWidth() const { return Eigen::Index(heads) * headDimQK; }
    Eigen::Index contextWidth() const { return Eigen::Index(heads) * headDimV; }
    Eigen::Index keyWidth() const { return Eigen::Index(kvHeads) * headDimQK; }
    Eigen::Index valueWidth() const { return Eigen::Index(kvHeads) * headDimV; }
};

// Query head `head` of a problem as a one-head problem of its own ("Open This Head in the
// Editor"): its W_Q columns, the W_K and W_V columns of the key/value head it reads, their
// biases, its sink; W_O and its bias are dropped (they mix every head). RoPE, the window and
// the soft-cap carry over unchanged.
AttentionProblem singleHeadProblem(const AttentionProblem &problem, int head);

} // namespace attnscope
