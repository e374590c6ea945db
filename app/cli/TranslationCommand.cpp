#include "app/cli/TranslationCommand.h"

#include "app/cli/CliSupport.h"
#include "core/formats/TraceExport.h"
#include "core/io/UserText.h"
#include "core/models/TranslationModel.h"

#include <QDir>

#include <nlohmann/json.hpp>

namespace attnscope {

namespace {

nlohmann::ordered_json side(const Encoding &e)
{
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    j["ids"] = e.ids;
    j["tokens"] = e.tokens;
    return j;
}

} // namespace

int runTranslationModelCommand(const QCommandLineParser &parser, const std::string &modelDir, QTextStream &out,
                               QTextStream &err, const BackendOptions &backendOptions, const FilesRead &read)
{
    const auto fail = [&](const std::string &message, int code) { return cli::fail(err, message, code); };
    for (const char *option : {"pool", "pool-mode", "qk-out", "chat", "no-think"})
        if (parser.isSet(option))
            return fail(std::string("model: --") + option + " is not available for a translation model", cli::kUsage);
    if (!parser.isSet("text"))
        return fail("model: a translation model reads --text SOURCE (and --target TARGET)", cli::kUsage);
    if (!parser.isSet("out"))
        return fail("model: --out DIR is required", cli::kUsage);
    auto request = parseBackendRequest(parser.value("backend").toStdString());
    if (!request)
        return fail(request.message(), cli::kUsage);
    auto model = TranslationModel::load(modelDir);
    if (!model)
        return fail(model.message(), cli::kFailed);
    auto source = model->encodeSource(parser.value("text").toStdString());
    if (!source)
        return fail("--text: " + source.message(), cli::kFailed);
    std::optional<Encoding> target;
    if (parser.isSet("target")) {
        auto encoded = model->encodeTarget(parser.value("target").toStdString());
        if (!encoded)
            return fail("--target: " + encoded.message(), cli::kFailed);
        target = std::move(*encoded);
    }
    auto selection = createBackend(*request, backendOptions);
    if (!selection)
        return fail(selection.message(), cli::kFailed);
    if (!target) {
        auto greedy = model->greedy(*source, *selection->backend);
        if (!greedy)
            return fail(greedy.message(), cli::kFailed);
        target = std::move(*greedy);
    }
    auto run = model->forward(*source, *target, *selection->backend);
    if (!run)
        return fail(run.message(), cli::kFailed);

    const TranslationRun &r = **run;
    const TranslationConfig &c = model->config();
    const std::int64_t s = r.sourceLength(), t = r.targetLength();
    const std::string dir = parser.value("out").toStdString();
    const QString outDir = parser.value("out");
    std::vector<NpyFolderTensor> tensors = {
        {"encoder_attentions", {c.encoder.layers, c.encoder.heads, s, s}, {}, r.encoderAttentions.data()},
        {"decoder_attentions", {c.decoder.layers, c.decoder.heads, t, t}, {}, r.decoderAttentions.data()},
        {"cross_attentions", {c.decoder.layers, c.decoder.heads, t, s}, {}, r.crossAttentions.data()}};
    std::vector<QString> outFiles;
    for (const NpyFolderTensor &tensor : tensors)
        outFiles.push_back(QDir(outDir).filePath(QString::fromStdString(tensor.name + ".npy")));
    outFiles.push_back(QDir(outDir).filePath("tokens.json"));
    if (auto exit = cli::checkBeforeWriting(err, read, "model", {outDir, outFiles, true}))
        return *exit;
    nlohmann::ordered_json tokens = nlohmann::ordered_json::object();
    tokens["source"] = side(r.source);
    tokens["target"] = side(r.target);
    const FolderFile tokensFile{"tokens.json",
                                tokens.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n"};
    if (Status st = writeNpyFolder(tensors, dir, {tokensFile}); !st)
        return fail(st.message(), cli::kFailed);

    cli::reportBackend(out, *selection, parser.isSet("verbose"));
    out << "model: marian, encoder " << c.encoder.layers << " layers x " << c.encoder.heads << " heads, decoder "
        << c.decoder.layers << " layers x " << c.decoder.heads << " heads, width " << c.width << ", " << s
        << " source and " << t << " target tokens\n";
    out << (parser.isSet("target") ? "target: " : "translation: ")
        << QString::fromStdString(printableText(model->targetText(r.target.ids), 400)) << "\n";
    out << "wrote: " << QString::fromStdString(printableText(dir, 200)) << " (tokens.json, encoder_attentions.npy ["
        << c.encoder.layers << "," << c.encoder.heads << "," << s << "," << s << "], decoder_attentions.npy ["
        << c.decoder.layers << "," << c.decoder.heads << "," << t << "," << t << "], cross_attentions.npy ["
        << c.decoder.layers << "," << c.decoder.heads << "," << t << "," << s << "])\n";
    return cli::kOk;
}

} // namespace attnscope
