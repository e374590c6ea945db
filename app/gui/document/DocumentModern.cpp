// The document's verbs for design.md's "Modern attention" fields (key/value heads, RoPE,
// soft-capping, the sliding window); the others are in Document.cpp.

#include "app/gui/document/Document.h"

#include "app/gui/document/DocumentCommands.h"
#include "app/render/ErrorText.h"
#include "core/ErrorCode.h"
#include "core/attention/Validation.h"

#include <QUndoStack>

#include <cmath>
#include <limits>

namespace attnscope {

namespace {

std::string numberString(double v)
{
    return QString::number(v, 'g', 17).toStdString();
}

QVariant optionalVariant(const std::optional<double> &v)
{
    return v ? QVariant(*v) : QVariant();
}

} // namespace

bool Document::pushValid(Project after, Changes what, const QString &text)
{
    // The rules of these fields are core's (validateProblem), written once: what it refuses is
    // refused here with its message, and nothing changes. No memory limit: these edits change
    // no size the trace depends on.
    if (Status s = validateProblem(after.problem, ProblemLimits{}); !s)
        return refuse(errorText(s.error()));
    return pushSnapshot(std::move(after), what, text);
}

bool Document::setKeyValueHeads(int kvHeads)
{
    const AttentionSpec &s = m_project.problem.spec;
    if (kvHeads == s.keyValueHeads())
        return false;
    if (kvHeads < 1 || kvHeads > s.heads || s.heads % kvHeads != 0)
        return refuse(errorText(codedError("validation.kvHeads", {std::to_string(s.heads), std::to_string(kvHeads)})));
    // No memory estimate: K and V only shrink below, or grow back to, what H heads would hold.
    return pushSnapshot(edit::setKeyValueHeads(m_project, kvHeads, m_init), ShapeChanged | SpecChanged,
                        tr("Set key/value heads to %1").arg(kvHeads));
}

bool Document::setRopeEnabled(bool on)
{
    if (m_project.problem.spec.rope.has_value() == on)
        return false;
    return pushValid(edit::setRope(m_project, on ? std::optional<RopeSpec>(RopeSpec{}) : std::nullopt),
                     SpecChanged | MaskChanged, on ? tr("Turn RoPE on") : tr("Turn RoPE off"));
}

bool Document::setRopeBase(double base, int mergeKey)
{
    const auto &rope = m_project.problem.spec.rope;
    if (!rope || base == rope->base)
        return false;
    if (!std::isfinite(base) || base <= 0)
        return refuse(errorText(codedError("validation.rope.base", {numberString(base)})));
    m_undoStack->push(new ChangeValueCommand(
        this, CommandId::RopeBase, mergeKey, rope->base, base,
        [](Document *d, const QVariant &v) { d->applyRopeBase(v.toDouble()); }, tr("Change RoPE base"), mergeKey != 0));
    return true;
}

bool Document::setRopePositions(TokenSide side, const std::vector<std::int64_t> &positions)
{
    if (!m_project.problem.spec.rope)
        return false;
    Project after = m_project;
    RopeSpec &rope = *after.problem.spec.rope;
    auto &target = side == TokenSide::Key ? rope.keyPositions : rope.queryPositions;
    if (target == positions)
        return false;
    target = positions;
    // Given positions are also what causal and the window compare: the mask changes with them.
    return pushValid(std::move(after), SpecChanged | MaskChanged,
                     side == TokenSide::Key ? tr("Set key positions") : tr("Set query positions"));
}

bool Document::setRopePositionsText(TokenSide side, const QString &text)
{
    if (!m_project.problem.spec.rope)
        return false;
    const auto positions =
        edit::parsePositions(text, side == TokenSide::Key ? "rope.keyPositions" : "rope.queryPositions");
    if (!positions)
        return refuse(errorText(positions.error()));
    return setRopePositions(side, *positions);
}

bool Document::setSoftcap(std::optional<double> softcap, int mergeKey)
{
    const std::optional<double> old = m_project.problem.spec.softcap;
    if (old == softcap)
        return false;
    if (softcap && (!std::isfinite(*softcap) || *softcap <= 0 || *softcap > double(std::numeric_limits<float>::max())))
        return refuse(errorText(codedError("validation.softcap", {numberString(*softcap)})));
    // Editing the number merges (stepping it is one undo step); turning it on or off never does.
    const bool valueEdit = old && softcap;
    m_undoStack->push(new ChangeValueCommand(
        this, CommandId::SoftcapValue, mergeKey, optionalVariant(old), optionalVariant(softcap),
        [](Document *d, const QVariant &v) {
            d->applySoftcap(v.isValid() ? std::optional<double>(v.toDouble()) : std::nullopt);
        },
        valueEdit ? tr("Change soft-cap")
        : softcap ? tr("Turn soft-cap on")
                  : tr("Turn soft-cap off"),
        valueEdit && mergeKey != 0));
    return true;
}

bool Document::setMaskWindow(std::int64_t window, int mergeKey)
{
    const std::int64_t old = m_project.problem.mask.window;
    if (window == old)
        return false;
    if (window < 0)
        return refuse(errorText(codedError("validation.window", {std::to_string(window)})));
    m_undoStack->push(new ChangeValueCommand(
        this, CommandId::MaskWindow, mergeKey, qint64(old), qint64(window),
        [](Document *d, const QVariant &v) { d->applyMaskWindow(v.toLongLong()); }, tr("Change sliding window"),
        mergeKey != 0));
    return true;
}

void Document::applyRopeBase(double base)
{
    if (m_project.problem.spec.rope)
        m_project.problem.spec.rope->base = base;
    emit changed(SpecChanged);
}

void Document::applySoftcap(std::optional<double> softcap)
{
    m_project.problem.spec.softcap = softcap;
    emit changed(SpecChanged);
}

void Document::applyMaskWindow(std::int64_t window)
{
    m_project.problem.mask.window = window;
    emit changed(MaskChanged);
}

} // namespace attnscope
