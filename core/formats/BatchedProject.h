#pragma once

#include "core/Result.h"
#include "core/attention/AttentionBackend.h"
#include "core/attention/AttentionProblem.h"
#include "core/attention/Validation.h"
#include "core/formats/ProjectFile.h"

#include <vector>

namespace attnscope {

// A project's sequences as problems (design.md, "A batch"). A single-sequence AttentionProblem
// stays the unit of compute: a batch of B is B problems sharing the weights, computed one by
// one through any backend, so every backend supports batches without kernel changes.
// Refers to the project; keep it alive while this is used.
class BatchedProject
{
public:
    explicit BatchedProject(const Project &project) : m_project(project) {}

    // Whether the file gave a batch (a 3-D query.x): outputs then gain a leading B axis.
    bool isBatched() const { return m_project.batch.has_value(); }
    // B for a batch, 1 otherwise.
    int sequenceCount() const;
    // The problem of sequence b (0 <= b < sequenceCount()): the project's problem with that
    // sequence's inputs and key padding. The shown sequence (0 after reading) is project.problem.
    AttentionProblem problemForSequence(int b) const;
    // The inputs and labels of sequence b (the shown one from project.problem and its tokens).
    SequenceInputs sequenceInputs(int b) const;
    // Whether the shown sequence (which the GUI edits) still has the shapes of the others;
    // when not, the batch cannot be saved as one B x T x d array (see serializeProject()).
    bool sequencesAgree() const;

private:
    const Project &m_project;
};

// The project with sequence b shown: the shown sequence's inputs (with any edits) go back into
// the batch and sequence b's come into project.problem (and its labels). Unchanged when b is
// out of range or the project is not batched. Saving writes the same file whichever is shown.
Project withSequenceShown(Project project, int b);

// Every sequence computed through backend, in order (one trace for an unbatched project).
// An error names the sequence of a batch: "sequence 1 (counting from 0) of 2: ...".
Result<std::vector<AttentionTrace>> computeSequences(AttentionBackend &backend, const Project &project);

// Checks every sequence of a batch past the first (validateProblem() checks project.problem):
// "sequence 2 of 3: query.x: expected a finite number at [1][0], found NaN". Ok when unbatched.
Status validateBatch(const Project &project, const ProblemLimits &limits);

} // namespace attnscope
