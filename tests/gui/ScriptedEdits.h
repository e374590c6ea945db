#pragma once

#include "app/gui/document/Document.h"
#include "core/Result.h"

#include <QString>

namespace attnscope {

// Edits given as text, for tests that run the application (attnscope_scripted) and cannot reach
// its widgets (tests/gui/tst_autosave.cpp sets ATTNSCOPE_TEST_EDITS). Each edit goes through the
// document's verbs, like any other. Form: "heads=3;dK=4;title=Text;value=Wq:0:1:2.5"
// (value=MATRIX:ROW:COL:NUMBER with MATRIX one of Xq Xkv Wq Wk Wv Wo).
Status applyScriptedEdits(Document &document, const QString &script);

// The document's state as JSON (file path, modified, the project as it would be saved), for
// the same tests (ATTNSCOPE_TEST_DUMP).
Status writeDocumentState(const Document &document, const QString &path);

} // namespace attnscope
