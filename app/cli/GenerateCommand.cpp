#include "app/cli/GenerateCommand.h"

#include "app/cli/CliSupport.h"
#include "app/cli/ModelCommands.h"
#include "core/formats/TraceExport.h"
#include "core/io/FilesRead.h"
#include "core/io/UserText.h"
#include "core/models/Generation.h"
#include "core/models/TransformerModel.h"

#include <QCommandLineParser>
#include <QDir>

#include <nlohmann/json.hpp>

namespace attnscope {

const char *const kGenerateUsage =
    R"(  generate MODEL_DIR (--text TEXT [--chat [--no-think]] | --ids 1,2,3) --max-new-tokens N
           --out DIR [--temperature X] [--top-k K] [--top-p P] [--seed S]
           [--pool N [--pool-mode max|mean]] [--backend auto|cpu|vulkan]
      Continue the text with a decoder (GPT-2, Llama, Mistral, Qwen2/3, Gemma 2/3)
      and a key/value cache: greedy by default; temperature, then top-k, then
      top-p, drawn with --seed (default 0). Stops after N tokens or at the eos
      id of generation_config.json or config.json, kept. Writes tokens.json
      (ids, tokens, promptLength, steps: each chosen token, its probability and
      the 10 most probable candidates) and attentions.npy [L,H,T,T] of the
      final sequence (--pool N: attentions_pooled.npy and entropy.npy).
)";

namespace {

using cli::kFailed;
using cli::kOk;
using cli::kUsage;

// The decoding options as given, or a usage error naming the option.
Result<GenerationSettings> parseSettings(const QCommandLineParser &parser)
{
    GenerationSettings s;
    bool ok = true;
    const auto value = [&](const char *name) { return parser.value(QString::fromUtf8(name)); };
    const auto bad = [&](const char *name, const char *expected) {
        return Error{std::string("generate: --") + name + ": expected " + expected + ", found " +
                     quotedText(value(name).toStdString())};
    };
    if (!parser.isSet("max-new-tokens"))
        return Error{"generate: --max-new-tokens N is required"};
    s.maxNewTokens = value("max-new-tokens").toLongLong(&ok);
    if (!ok)
        return bad("max-new-tokens", "a whole number >= 1");
    if (parser.isSet("temperature") && (s.temperature = value("temperature").toDouble(&ok), !ok))
        return bad("temperature", "a number >= 0");
    if (parser.isSet("top-k") && (s.topK = value("top-k").toLongLong(&ok), !ok))
        return bad("top-k", "a whole number >= 0");
    if (parser.isSet("top-p") && (s.topP = value("top-p").toDouble(&ok), !ok))
        return bad("top-p", "a number in (0, 1]");
    if (parser.isSet("seed") && (s.seed = value("seed").toULongLong(&ok), !ok))
        return bad("seed", "a whole number >= 0");
    if (Status st = checkGenerationSettings(s); !st)
        return Error{"generate: " + st.message()};
    return s;
}

} // namespace

int runGenerateCommand(const QStringList &args, QTextStream &out, QTextStream &err,
                       const BackendOptions &backendOptions)
{
    const auto fail = [&](const std::string &message, int code) { return cli::fail(err, message, code); };
    const FilesRead read; // every file read from here on: no output may replace one
    QCommandLineParser parser;
    parser.addOption({"text", "The prompt.", "TEXT"});
    parser.addOption({"ids", "Prompt ids, comma-separated, used exactly as given.", "IDS"});
    parser.addOption({"chat", "Wrap the text as one user turn of the model's chat template."});
    parser.addOption({"no-think", "With --chat: turn Qwen3's thinking off."});
    parser.addOption({"max-new-tokens", "At most N generated tokens.", "N"});
    parser.addOption({"out", "Directory for tokens.json and the attentions.", "DIR"});
    parser.addOption({"temperature", "0 (greedy, the default) or the sampling temperature.", "X"});
    parser.addOption({"top-k", "Keep the K most probable tokens (0: all).", "K"});
    parser.addOption({"top-p", "Keep the most probable tokens up to probability P (1: all).", "P"});
    parser.addOption({"seed", "The sampler's seed (default 0).", "S"});
    parser.addOption({"pool", "Pooled maps: at most N x N cells per head.", "N"});
    parser.addOption({"pool-mode", "max (default) or mean.", "mode", "max"});
    parser.addOption({"backend", "auto, cpu or vulkan (default auto).", "NAME", "auto"});
    if (auto exit = cli::parseOnePositional(parser, args, "generate", "MODEL_DIR", kGenerateUsage, out, err))
        return *exit;
    if (auto usage = chatUsageError(parser, "generate"))
        return fail(*usage, kUsage);
    if (parser.isSet("text") == parser.isSet("ids"))
        return fail("generate: give either --text TEXT or --ids 1,2,3", kUsage);
    if (!parser.isSet("out"))
        return fail("generate: --out DIR is required", kUsage);
    auto settings = parseSettings(parser);
    if (!settings)
        return fail(settings.message(), kUsage);
    ForwardKeep keep;
    if (parser.isSet("pool") || parser.isSet("pool-mode")) {
        auto pool = cli::parsePoolOptions(parser, "generate");
        if (!pool)
            return fail(pool.message(), kUsage);
        keep.maps = false;
        keep.poolBins = pool->bins;
        keep.poolMode = pool->mode;
    }
    auto request = parseBackendRequest(parser.value("backend").toStdString());
    if (!request)
        return fail(request.message(), kUsage);
    const std::string modelDir = parser.positionalArguments().front().toStdString();
    int code = kFailed;
    auto loaded = loadModelInput(parser, modelDir, code);
    if (!loaded)
        return fail(loaded.message(), code);
    const TransformerModel *model = &loaded->model;
    auto eos = readEosIds(modelDir);
    if (!eos)
        return fail(eos.message(), kFailed);
    settings->eosIds = std::move(*eos);
    auto generation = generate(*model, loaded->input, *settings);
    if (!generation)
        return fail(generation.message(), kFailed);

    // The final sequence's attentions: one forward over its ids, the rows the cache gave.
    auto selection = createBackend(*request, backendOptions);
    if (!selection)
        return fail(selection.message(), kFailed);
    auto input = model->input(generation->ids);
    if (!input)
        return fail(input.message(), kFailed);
    auto run = model->forward(*input, *selection->backend, nullptr, keep);
    if (!run)
        return fail(run.message(), kFailed);
    const ModelRun &r = **run;
    const ModelConfig &c = model->config();
    std::vector<NpyFolderTensor> tensors;
    std::vector<const MatrixF *> pooledParts, entropyParts;
    if (keep.maps) {
        tensors.push_back({"attentions", {c.layers, c.heads, r.length, r.length}, {}, r.attentions.data()});
    } else {
        for (const PooledResult &layer : r.pooled) {
            for (const MatrixF &m : layer.pooled)
                pooledParts.push_back(&m);
            entropyParts.push_back(&layer.entropy);
        }
        const std::int64_t nq = pooledParts.front()->rows(), nk = pooledParts.front()->cols();
        tensors.push_back({"attentions_pooled", {c.layers, c.heads, nq, nk}, pooledParts, nullptr});
        tensors.push_back({"entropy", {c.layers, c.heads, r.length}, entropyParts, nullptr});
    }
    const QString outDir = parser.value("out");
    std::vector<QString> outFiles;
    for (const NpyFolderTensor &t : tensors)
        outFiles.push_back(QDir(outDir).filePath(QString::fromStdString(t.name + ".npy")));
    outFiles.push_back(QDir(outDir).filePath("tokens.json"));
    if (auto exit = cli::checkBeforeWriting(err, read, "generate", {outDir, outFiles, true}))
        return *exit;

    const FolderFile tokensFile{"tokens.json", generationTokensJson(*generation)};
    if (Status s = writeNpyFolder(tensors, outDir.toStdString(), {tokensFile}); !s)
        return fail(s.message(), kFailed);

    out << "backend: " << QString::fromStdString(selection->backend->name()) << "\n"
        << "model: " << c.typeName() << ", " << c.layers << " layers x " << c.heads << " heads\n"
        << "generated: " << generation->steps.size() << " tokens after " << generation->promptLength
        << (generation->stoppedAtEos ? " (stopped at eos)" : "") << "\n"
        << "wrote: " << QString::fromStdString(printableText(outDir.toStdString(), 200)) << " (tokens.json, "
        << (keep.maps ? "attentions.npy" : "attentions_pooled.npy, entropy.npy") << ")\n";
    return kOk;
}

} // namespace attnscope
