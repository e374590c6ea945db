#include "app/cli/ModelCommands.h"

#include "app/cli/CliSupport.h"
#include "app/cli/TranslationCommand.h"
#include "app/engine/BackendChoice.h"
#include "core/formats/QkDump.h"
#include "core/formats/TraceExport.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"
#include "core/models/Generation.h"
#include "core/models/TransformerModel.h"
#include "core/models/TranslationModel.h"
#include "core/tokenizers/ChatTemplate.h"
#include "core/tokenizers/Tokenizer.h"

#include <QCommandLineParser>
#include <QDir>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <optional>

namespace attnscope {

const char *const kTokenizeUsage = R"(  tokenize MODEL_DIR --text TEXT [--chat [--no-think]]
      Print the ids and tokens of TEXT as the model folder's tokenizer (GPT-2,
      BERT or tokenizer.json) gives them, as JSON: {"ids": [...], "tokens": [...]}
      (with "words", each token's word or -1, for tokenizer.json). --chat wraps
      TEXT as one user turn with the generation prompt (Qwen, Llama 3, Gemma);
      --no-think turns Qwen3's thinking off.
)";

const char *const kModelUsage =
    R"(  model MODEL_DIR (--text TEXT | --ids 1,2,3) (--out DIR [--pool N [--pool-mode max|mean]]
        | --qk-out DUMP | both) [--backend auto|cpu|vulkan] [--chat [--no-think]] [--verbose]
      Run a model folder (GPT-2, BERT, Llama, Mistral, Qwen2/3, Gemma 2/3:
      config.json, model.safetensors or its shards, tokenizer) and write
      tokens.json, attentions.npy float32 [L,H,T,T] and hidden_states.npy
      float32 [L+1,T,d] into DIR. --pool N writes attentions_pooled.npy
      [L,H,Nq,Nk] (at most N x N cells per head, max or mean) and entropy.npy
      [L,H,T] instead of attentions.npy, never holding a T x T map per head.
      --qk-out writes each layer's queries and keys as an attnscope-qk dump,
      from which stats, render and export compute any map exactly.
      --chat: as for tokenize. --verbose also prints a Vulkan backend's
      submissions and bytes uploaded and read back for the forward.
  model MODEL_DIR --text SOURCE [--target TARGET] --out DIR [--backend ...]
      A translation model folder (Marian: config.json, model.safetensors,
      source.spm, target.spm, vocab.json): teacher-forced on TARGET, or on the
      greedy translation without it; writes tokens.json (source and target),
      encoder_attentions.npy [L,H,S,S], decoder_attentions.npy [L,H,T,T] and
      cross_attentions.npy [L,H,T,S].
)";

namespace {

using cli::kFailed;
using cli::kOk;
using cli::kUsage;

// "1, 2,3" as ids; an error naming the first item that is not a whole number.
Result<std::vector<std::int32_t>> parseIds(const std::string &text)
{
    std::vector<std::int32_t> ids;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        std::size_t first = start, last = comma;
        while (first < last && text[first] == ' ')
            ++first;
        while (last > first && text[last - 1] == ' ')
            --last;
        std::int32_t id = 0;
        const auto r = std::from_chars(text.data() + first, text.data() + last, id);
        if (first == last || r.ec != std::errc() || r.ptr != text.data() + last)
            return Error{"--ids: expected whole numbers separated by commas, found " +
                         quotedText(std::string_view(text).substr(first, last - first))};
        ids.push_back(id);
        if (comma == text.size())
            return ids;
        start = comma + 1;
    }
}

// --chat: the text as one user turn of the folder's chat preset, encoded without a second BOS.
Result<Encoding> chatEncoding(const std::string &modelDir, const Tokenizer &tokenizer, const std::string &text,
                              bool thinking)
{
    auto modelType = readModelType(modelDir);
    if (!modelType)
        return modelType.error();
    const ChatOptions options{thinking};
    auto preset = chatPreset(*modelType, tokenizer, options);
    if (!preset)
        return Error{"--chat: " + preset.message(), preset.kind()};
    auto chatTemplate = readChatTemplate(modelDir);
    if (!chatTemplate)
        return chatTemplate.error();
    return encodeChat(tokenizer, *preset, text, options, *chatTemplate);
}

} // namespace

// --no-think without --chat is a usage error.
std::optional<std::string> chatUsageError(const QCommandLineParser &parser, const char *command)
{
    if (parser.isSet("no-think") && !parser.isSet("chat"))
        return std::string(command) + ": --no-think needs --chat";
    if (parser.isSet("chat") && !parser.isSet("text"))
        return std::string(command) + ": --chat needs --text TEXT";
    return std::nullopt;
}

Result<ModelInput> loadModelInput(const QCommandLineParser &parser, const std::string &modelDir, int &code)
{
    code = kUsage;
    std::vector<std::int32_t> ids;
    if (parser.isSet("ids")) {
        auto parsed = parseIds(parser.value("ids").toStdString());
        if (!parsed)
            return parsed.error();
        ids = std::move(*parsed);
    }
    code = kFailed;
    if (parser.isSet("chat")) {
        // The chat turn's ids, then used as --ids are (checked against the model's vocabulary).
        auto tokenizer = loadTokenizer(modelDir);
        if (!tokenizer)
            return tokenizer.error();
        auto chat = chatEncoding(modelDir, *tokenizer, parser.value("text").toStdString(), !parser.isSet("no-think"));
        if (!chat)
            return chat.error();
        ids = chat->ids;
    }
    auto model = TransformerModel::load(modelDir);
    if (!model)
        return model.error();
    auto input = parser.isSet("text") && !parser.isSet("chat") ? model->encode(parser.value("text").toStdString())
                                                               : model->input(ids);
    if (!input)
        return Error{(parser.isSet("text") ? "--text: " : "--") + input.message(), input.kind()};
    return ModelInput{std::move(*model), std::move(*input)};
}

int runTokenizeCommand(const QStringList &args, QTextStream &out, QTextStream &err)
{
    const auto fail = [&](const std::string &message, int code) { return cli::fail(err, message, code); };
    QCommandLineParser parser;
    parser.addOption({"text", "The text to tokenize.", "TEXT"});
    parser.addOption({"chat", "Wrap the text as one user turn of the model's chat template."});
    parser.addOption({"no-think", "With --chat: turn Qwen3's thinking off."});
    if (auto exit = cli::parseOnePositional(parser, args, "tokenize", "MODEL_DIR", kTokenizeUsage, out, err))
        return *exit;
    if (!parser.isSet("text"))
        return fail("tokenize: --text TEXT is required", kUsage);
    if (auto usage = chatUsageError(parser, "tokenize"))
        return fail(*usage, kUsage);
    const std::string modelDir = parser.positionalArguments().front().toStdString();
    auto tokenizer = loadTokenizer(modelDir);
    if (!tokenizer)
        return fail(tokenizer.message(), kFailed);
    Encoding encoding;
    if (parser.isSet("chat")) {
        auto chat = chatEncoding(modelDir, *tokenizer, parser.value("text").toStdString(), !parser.isSet("no-think"));
        if (!chat)
            return fail(chat.message(), kFailed);
        encoding = std::move(*chat);
    } else {
        encoding = tokenizer->encode(parser.value("text").toStdString());
    }
    nlohmann::ordered_json root = nlohmann::ordered_json::object();
    root["ids"] = encoding.ids;
    root["tokens"] = encoding.tokens;
    // GPT-2 and BERT folders print what they always printed.
    if (tokenizer->kind() == TokenizerKind::HuggingFaceJson)
        root["words"] = encoding.words;
    // Tokens are vocabulary keys, valid UTF-8 already; replace guards the dump all the same.
    out << QString::fromStdString(root.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)) << "\n";
    return kOk;
}

int runModelCommand(const QStringList &args, QTextStream &out, QTextStream &err, const BackendOptions &backendOptions)
{
    const auto fail = [&](const std::string &message, int code) { return cli::fail(err, message, code); };
    const FilesRead read; // every file read from here on: no output may replace one
    QCommandLineParser parser;
    parser.addOption({"text", "The text the model reads.", "TEXT"});
    parser.addOption({"ids", "Token ids, comma-separated, used exactly as given.", "IDS"});
    parser.addOption({"out", "Directory for tokens.json, attentions.npy and hidden_states.npy.", "DIR"});
    parser.addOption({"backend", "auto, cpu or vulkan (default auto).", "NAME", "auto"});
    parser.addOption({"verbose", "Also print the device's submissions and transfers (Vulkan)."});
    parser.addOption({"chat", "Wrap the text as one user turn of the model's chat template."});
    parser.addOption({"no-think", "With --chat: turn Qwen3's thinking off."});
    parser.addOption({"pool", "Pooled maps: at most N x N cells per head.", "N"});
    parser.addOption({"pool-mode", "max (default) or mean.", "mode", "max"});
    parser.addOption({"qk-out", "Directory for the queries and keys (attnscope-qk dump).", "DUMP"});
    parser.addOption({"target", "A translation model's target text, teacher-forced.", "TARGET"});
    if (auto exit = cli::parseOnePositional(parser, args, "model", "MODEL_DIR", kModelUsage, out, err))
        return *exit;
    const std::string modelDir = parser.positionalArguments().front().toStdString();
    if (isTranslationModelFolder(modelDir))
        return runTranslationModelCommand(parser, modelDir, out, err, backendOptions, read);
    if (parser.isSet("target"))
        return fail("model: --target is for translation models (model_type marian)", kUsage);
    if (auto usage = chatUsageError(parser, "model"))
        return fail(*usage, kUsage);
    if (parser.isSet("text") == parser.isSet("ids"))
        return fail("model: give either --text TEXT or --ids 1,2,3", kUsage);
    if (!parser.isSet("out") && !parser.isSet("qk-out"))
        return fail("model: --out DIR (or --qk-out DUMP) is required", kUsage);
    ForwardKeep keep;
    if (parser.isSet("pool") || parser.isSet("pool-mode")) {
        if (!parser.isSet("out"))
            return fail("model: --pool needs --out DIR", kUsage);
        auto pool = cli::parsePoolOptions(parser, "model");
        if (!pool)
            return fail(pool.message(), kUsage);
        keep.poolBins = pool->bins;
        keep.poolMode = pool->mode;
    }
    keep.maps = parser.isSet("out") && keep.poolBins == 0;
    keep.queriesKeys = parser.isSet("qk-out");
    auto request = parseBackendRequest(parser.value("backend").toStdString());
    if (!request)
        return fail(request.message(), kUsage);
    int code = kFailed;
    auto loaded = loadModelInput(parser, parser.positionalArguments().front().toStdString(), code);
    if (!loaded)
        return fail(loaded.message(), code);
    const TransformerModel *model = &loaded->model;
    const Encoding *input = &loaded->input;
    auto selection = createBackend(*request, backendOptions);
    if (!selection)
        return fail(selection.message(), kFailed);
    auto run = model->forward(*input, *selection->backend, nullptr, keep);
    if (!run)
        return fail(run.message(), kFailed);

    const ModelRun &r = **run;
    const ModelConfig &c = model->config();
    const std::string dir = parser.value("out").toStdString();
    const QString outDir = parser.value("out"), qkDir = parser.value("qk-out");
    std::vector<NpyFolderTensor> tensors;
    std::vector<QString> outFiles;
    std::vector<const MatrixF *> pooledParts, entropyParts;
    std::int64_t nq = 0, nk = 0;
    if (parser.isSet("out")) {
        std::vector<const MatrixF *> hidden;
        for (const MatrixF &h : r.hiddenStates)
            hidden.push_back(&h);
        tensors.push_back({"hidden_states", {c.layers + 1, r.length, c.width}, hidden, nullptr});
        if (keep.maps) {
            tensors.push_back({"attentions", {c.layers, c.heads, r.length, r.length}, {}, r.attentions.data()});
        } else {
            for (const PooledResult &layer : r.pooled) {
                for (const MatrixF &m : layer.pooled)
                    pooledParts.push_back(&m);
                entropyParts.push_back(&layer.entropy);
            }
            nq = pooledParts.front()->rows(), nk = pooledParts.front()->cols();
            tensors.push_back({"attentions_pooled", {c.layers, c.heads, nq, nk}, pooledParts, nullptr});
            tensors.push_back({"entropy", {c.layers, c.heads, r.length}, entropyParts, nullptr});
        }
        for (const NpyFolderTensor &t : tensors)
            outFiles.push_back(QDir(outDir).filePath(QString::fromStdString(t.name + ".npy")));
        outFiles.push_back(QDir(outDir).filePath("tokens.json"));
        if (auto exit = cli::checkBeforeWriting(err, read, "model", {outDir, outFiles, true}))
            return *exit;
    }
    if (keep.queriesKeys) {
        std::vector<QString> dumpFiles{QDir(qkDir).filePath(QkDump::kIndexName)};
        for (int l = 0; l < c.layers; ++l)
            dumpFiles.push_back(QDir(qkDir).filePath(QString::asprintf("layer-%03d.safetensors", l)));
        if (auto exit = cli::checkBeforeWriting(err, read, "model", {qkDir, dumpFiles, true}))
            return *exit;
    }
    if (parser.isSet("out")) {
        nlohmann::ordered_json tokens = nlohmann::ordered_json::object();
        tokens["ids"] = r.ids;
        tokens["tokens"] = r.tokens;
        // Tokens are vocabulary keys, valid UTF-8 already; replace guards the dump all the same.
        const FolderFile tokensFile{
            "tokens.json", tokens.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n"};
        if (Status s = writeNpyFolder(tensors, dir, {tokensFile}); !s)
            return fail(s.message(), kFailed);
    }
    if (keep.queriesKeys) {
        QkDumpWriter writer(qkDir.toStdString(), r.tokens, r.tokens);
        for (const auto &layer : r.queriesKeys)
            if (Status s = writer.addLayer(*layer); !s)
                return fail(s.message(), kFailed);
        if (Status s = writer.finish(); !s)
            return fail(s.message(), kFailed);
    }

    cli::reportBackend(out, *selection, parser.isSet("verbose"));
    out << "model: " << c.typeName() << ", " << c.layers << " layers x " << c.heads << " heads, width " << c.width
        << ", " << r.length << " tokens\n";
    if (parser.isSet("out")) {
        out << "wrote: " << QString::fromStdString(printableText(dir, 200)) << " (tokens.json, ";
        if (keep.maps)
            out << "attentions.npy [" << c.layers << "," << c.heads << "," << r.length << "," << r.length << "], ";
        else
            out << "attentions_pooled.npy [" << c.layers << "," << c.heads << "," << nq << "," << nk
                << "], entropy.npy [" << c.layers << "," << c.heads << "," << r.length << "], ";
        out << "hidden_states.npy [" << c.layers + 1 << "," << r.length << "," << c.width << "])\n";
    }
    if (keep.queriesKeys)
        out << "wrote: " << QString::fromStdString(printableText(qkDir.toStdString(), 200)) << " (attnscope-qk dump, "
            << c.layers << " layers, q and k as F32)\n";
    if (keep.poolBins > 0 || (keep.queriesKeys && !keep.maps)) {
        const double full = 4.0 * double(c.layers) * c.heads * double(r.length) * double(r.length);
        out << "memory: peak_rss_mib " << QString::number(peakResidentMiB(), 'f', 1) << ", full maps would need "
            << QString::number(full / 1048576.0, 'f', 1) << " MiB\n";
    }
    return kOk;
}

} // namespace attnscope

namespace attnscope {

const char *const kModelBenchUsage =
    R"(  bench --model MODEL_DIR --tokens T [--generate N] [--repeat R] [--backend auto|cpu|vulkan]
      Time the model's forward on T ids (every attention and hidden state kept in
      memory, nothing written); print median_ms and peak_rss_mib (the process's
      peak, load included). --generate N: instead, greedy generation after the T
      ids with the key/value cache (on the CPU), timing the prompt (prefill_ms,
      up to the first new token) apart from the N steps after it
      (decode_tokens_per_s).
)";

namespace {

double medianOf(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// `bench --model --generate N`: generate() as the product runs it (every step's attention rows,
// the probabilities and candidates of each step), greedy and without an eos, so that it always
// makes 1 + N tokens: the prompt's forward gives the first, each of the N steps one more.
int runGenerateBench(const TransformerModel &model, const Encoding &prompt, long long steps, long long repeat,
                     QTextStream &out, QTextStream &err)
{
    GenerationSettings settings;
    settings.maxNewTokens = steps + 1;
    std::vector<double> prefill, rates;
    for (long long i = 0; i <= repeat; ++i) { // run 0 warms caches and allocators
        using Clock = std::chrono::steady_clock;
        const auto start = Clock::now();
        std::optional<Clock::time_point> first;
        auto g = generate(model, prompt, settings, nullptr, [&](const GenerationStep &) {
            if (!first)
                first = Clock::now();
        });
        const auto end = Clock::now();
        if (!g)
            return cli::fail(err, g.message(), cli::kFailed);
        if (std::int64_t(g->steps.size()) != steps + 1)
            return cli::fail(err,
                             "bench --model --generate: generation stopped after " + std::to_string(g->steps.size()) +
                                 " of " + std::to_string(steps + 1) + " tokens",
                             cli::kFailed);
        if (i > 0) {
            prefill.push_back(std::chrono::duration<double, std::milli>(*first - start).count());
            rates.push_back(double(steps) / std::chrono::duration<double>(end - *first).count());
        }
    }
    out << "T=" << prompt.ids.size() << " N=" << steps << ": prefill_ms " << QString::number(medianOf(prefill), 'f', 1)
        << ", decode_tokens_per_s " << QString::number(medianOf(rates), 'f', 2) << ", median over " << repeat
        << " runs, peak_rss_mib " << QString::number(peakResidentMiB(), 'f', 1) << "\n";
    return cli::kOk;
}

} // namespace

int runModelBenchCommand(const QStringList &args, QTextStream &out, QTextStream &err,
                         const BackendOptions &backendOptions)
{
    const auto fail = [&](const std::string &message, int code) { return cli::fail(err, message, code); };
    QCommandLineParser parser;
    parser.addOption({"model", "The model folder.", "MODEL_DIR"});
    parser.addOption({"tokens", "How many ids the forward reads.", "T"});
    parser.addOption({"generate", "Time greedy generation of N steps after the T ids.", "N"});
    parser.addOption({"repeat", "Timed runs after one warm-up (default 3).", "N", "3"});
    parser.addOption({"backend", "auto, cpu or vulkan (default auto).", "NAME", "auto"});
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    if (!parser.parse(args))
        return fail("bench: " + parser.errorText().toStdString(), kUsage);
    if (!parser.positionalArguments().isEmpty())
        return fail("bench --model: unexpected argument " +
                        quotedText(parser.positionalArguments().front().toStdString()),
                    kUsage);
    bool tokensOk = false, repeatOk = false;
    const long long tokens = parser.value("tokens").toLongLong(&tokensOk);
    const long long repeat = parser.value("repeat").toLongLong(&repeatOk);
    if (!parser.isSet("tokens") || !tokensOk || tokens < 1 || tokens > (1 << 20))
        return fail("bench --model: --tokens: expected a whole number from 1 to 1048576, found " +
                        quotedText(parser.value("tokens").toStdString()),
                    kUsage);
    if (!repeatOk || repeat < 1 || repeat > 1000)
        return fail("bench --model: --repeat: expected a whole number from 1 to 1000, found " +
                        quotedText(parser.value("repeat").toStdString()),
                    kUsage);
    bool generateOk = false;
    const long long steps = parser.value("generate").toLongLong(&generateOk);
    if (parser.isSet("generate") && (!generateOk || steps < 1 || steps > (1 << 20)))
        return fail("bench --model: --generate: expected a whole number from 1 to 1048576, found " +
                        quotedText(parser.value("generate").toStdString()),
                    kUsage);
    auto request = parseBackendRequest(parser.value("backend").toStdString());
    if (!request)
        return fail(request.message(), kUsage);
    if (parser.isSet("generate") && *request == BackendRequest::Vulkan)
        return fail("bench --model: --generate runs on the CPU (the key/value cache); --backend vulkan is not used",
                    kUsage);
    auto model = TransformerModel::load(parser.value("model").toStdString());
    if (!model)
        return fail(model.message(), kFailed);
    // Ids spread over the vocabulary by a fixed rule, so every run reads the same tokens.
    std::vector<std::int32_t> ids(static_cast<std::size_t>(tokens));
    std::uint64_t state = 0x9E3779B97F4A7C15ull;
    for (std::int32_t &id : ids) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        id = std::int32_t((state >> 33) % std::uint64_t(model->config().vocabSize));
    }
    auto input = model->input(std::move(ids));
    if (!input)
        return fail("--tokens: " + input.message(), kFailed);
    const ModelConfig &c = model->config();
    if (parser.isSet("generate")) {
        if (tokens + steps + 1 > c.maxTokens())
            return fail("bench --model: --tokens " + std::to_string(tokens) + " and --generate " +
                            std::to_string(steps) + " need " + std::to_string(tokens + steps + 1) +
                            " positions; this model has " + std::to_string(c.maxTokens()),
                        kUsage);
        out << "backend: cpu (generation's key/value cache)\n"
            << "model: " << c.typeName() << ", " << c.layers << " layers x " << c.heads << " heads ("
            << c.keyValueHeads() << " key/value), width " << c.width << ", " << tokens << " tokens, then " << steps
            << " steps\n";
        out.flush();
        return runGenerateBench(*model, *input, steps, repeat, out, err);
    }
    auto selection = createBackend(*request, backendOptions);
    if (!selection)
        return fail(selection.message(), kFailed);
    out << "backend: " << QString::fromStdString(selection->backend->name()) << "\n"
        << "device: " << QString::fromStdString(selection->backend->deviceName()) << "\n";
    if (!selection->notice.empty())
        out << "note: " << QString::fromStdString(selection->notice) << "\n";
    out << "model: " << c.typeName() << ", " << c.layers << " layers x " << c.heads << " heads (" << c.keyValueHeads()
        << " key/value), width " << c.width << ", " << tokens << " tokens\n";
    out.flush();
    std::vector<double> times;
    for (long long i = 0; i <= repeat; ++i) { // run 0 warms caches and allocators
        const auto start = std::chrono::steady_clock::now();
        auto run = model->forward(*input, *selection->backend);
        const auto end = std::chrono::steady_clock::now();
        if (!run)
            return fail(run.message(), kFailed);
        if (i > 0)
            times.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    }
    out << "runs: " << repeat << "\n"
        << "median_ms " << QString::number(medianOf(times), 'f', 1) << "\n"
        << "peak_rss_mib " << QString::number(peakResidentMiB(), 'f', 1) << "\n";
    return kOk;
}

} // namespace attnscope
