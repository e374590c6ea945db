<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>AlignmentRenderer</name>
    <message>
        <source>Cross-attention: head %1 is %2 x %3, head 0 is %4 x %5</source>
        <translation>交叉注意力：头 %1 是 %2 x %3，头 0 是 %4 x %5</translation>
    </message>
    <message>
        <source>Cross-attention: the heads are %1 x %2, with no target or no source token</source>
        <translation>交叉注意力：各头为 %1 x %2，没有目标词元或源词元</translation>
    </message>
    <message>
        <source>Cross-attention: %1 source labels for %2 source tokens</source>
        <translation>交叉注意力：%2 个源词元却有 %1 个源标签</translation>
    </message>
    <message>
        <source>Cross-attention: %1 target labels for %2 target rows</source>
        <translation>交叉注意力：%2 个目标行却有 %1 个目标标签</translation>
    </message>
    <message>
        <source>Cross-attention: end-of-sentence column %1 is not one of the %2 source tokens</source>
        <translation>交叉注意力：句末列 %1 不在 %2 个源词元之中</translation>
    </message>
    <message>
        <source>%1 → %2: %3</source>
        <translation>%1 → %2：%3</translation>
    </message>
</context>
<context>
    <name>FigureExporter</name>
    <message>
        <source>DPI %1 is out of range (%2 to %3)</source>
        <translation>DPI %1 超出范围（%2 到 %3）</translation>
    </message>
    <message>
        <source>figure size %1 x %2 pixels is out of range (1 to %3 per side)</source>
        <translation>图像尺寸 %1 x %2 像素超出范围（每边 1 到 %3）</translation>
    </message>
    <message>
        <source>not enough memory for a %1 x %2 image</source>
        <translation>内存不足，无法生成 %1 x %2 的图像</translation>
    </message>
    <message>
        <source>%1: expected a .png, .svg or .pdf file name</source>
        <translation>%1：文件名应以 .png、.svg 或 .pdf 结尾</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>%1: the PNG could not be encoded</source>
        <translation>%1：无法编码 PNG</translation>
    </message>
    <message>
        <source>%1: the figure could not be painted</source>
        <translation>%1：无法绘制图像</translation>
    </message>
</context>
<context>
    <name>FigureRenderer</name>
    <message>
        <source>One head</source>
        <translation>单个头</translation>
    </message>
    <message>
        <source>All heads (grid)</source>
        <translation>所有头（网格）</translation>
    </message>
    <message>
        <source>Mean over heads</source>
        <translation>各头平均</translation>
    </message>
    <message>
        <source>Head view (token lines)</source>
        <translation>头视图（词元连线）</translation>
    </message>
    <message>
        <source>Step by step</source>
        <translation>逐步计算</translation>
    </message>
    <message>
        <source>Mask</source>
        <translation>掩码</translation>
    </message>
    <message>
        <source>scaled scores</source>
        <translation>缩放后的分数</translation>
    </message>
    <message>
        <source>weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>AttnScope figure: %1</source>
        <translation>AttnScope 图：%1</translation>
    </message>
    <message>
        <source>Layers and heads (grid)</source>
        <translation>各层与各头（网格）</translation>
    </message>
    <message>
        <source>Attention rollout</source>
        <translation>注意力展开（rollout）</translation>
    </message>
    <message>
        <source>nothing to draw: the trace has no heads</source>
        <translation>没有可绘制的内容：计算结果中没有头</translation>
    </message>
    <message>
        <source>Layer %1, head %2</source>
        <translation>第 %1 层，头 %2</translation>
    </message>
    <message>
        <source>Layer %1</source>
        <translation>第 %1 层</translation>
    </message>
    <message>
        <source>Head %1</source>
        <translation>头 %1</translation>
    </message>
    <message>
        <source>Head</source>
        <translation>头</translation>
    </message>
    <message>
        <source>nothing to draw: the input has no attention maps</source>
        <translation>没有可绘制的内容：输入中没有注意力图</translation>
    </message>
    <message>
        <source>layer %1 is out of range: the input has %2 layer(s), numbered 0 to %3</source>
        <translation>层 %1 超出范围：输入共有 %2 层，编号为 0 到 %3</translation>
    </message>
    <message>
        <source>head %1 is out of range: the input has %2 head(s), numbered 0 to %3</source>
        <translation>头 %1 超出范围：输入共有 %2 个头，编号为 0 到 %3</translation>
    </message>
    <message>
        <source>words cannot be merged: the input has no token labels</source>
        <translation>无法合并为词：输入没有词元标签</translation>
    </message>
    <message>
        <source>the %1 view needs a project</source>
        <translation>%1 视图需要一个项目</translation>
    </message>
    <message>
        <source>%1 (words)</source>
        <translation>%1（按词）</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>head %1 (%2)</source>
        <translation>头 %1（%2）</translation>
    </message>
    <message>
        <source>1 head (%1)</source>
        <translation>1 个头（%1）</translation>
    </message>
    <message>
        <source>%1 heads (%2)</source>
        <translation>%1 个头（%2）</translation>
    </message>
    <message>
        <source>mean weights over 1 head</source>
        <translation>1 个头的平均权重</translation>
    </message>
    <message>
        <source>mean weights over %1 heads</source>
        <translation>%1 个头的平均权重</translation>
    </message>
    <message>
        <source>head view, all heads</source>
        <translation>头视图，所有头</translation>
    </message>
    <message>
        <source>head view, head %1</source>
        <translation>头视图，头 %1</translation>
    </message>
    <message>
        <source>head %1 step by step</source>
        <translation>头 %1 逐步计算</translation>
    </message>
    <message>
        <source>attention mask (%1 × %2)</source>
        <translation>注意力掩码（%1 × %2）</translation>
    </message>
    <message>
        <source>1 layer × %1 heads</source>
        <translation>1 层 × %1 个头</translation>
    </message>
    <message>
        <source>%1 layers × %2 heads</source>
        <translation>%1 层 × %2 个头</translation>
    </message>
    <message>
        <source>attention rollout over 1 layer</source>
        <translation>1 层的注意力展开</translation>
    </message>
    <message>
        <source>attention rollout over %1 layers</source>
        <translation>%1 层的注意力展开</translation>
    </message>
    <message>
        <source>layer %1, head %2</source>
        <translation>第 %1 层，头 %2</translation>
    </message>
    <message>
        <source>layer %1, every head</source>
        <translation>第 %1 层，全部头</translation>
    </message>
    <message>
        <source>layer %1, mean over heads</source>
        <translation>第 %1 层，各头平均</translation>
    </message>
    <message>
        <source>layer %1, head view, all heads</source>
        <translation>第 %1 层，头视图，所有头</translation>
    </message>
    <message>
        <source>layer %1, head view, head %2</source>
        <translation>第 %1 层，头视图，头 %2</translation>
    </message>
    <message>
        <source>K/V heads: %1</source>
        <translation>键值头：%1</translation>
    </message>
    <message>
        <source>window %1</source>
        <translation>窗口 %1</translation>
    </message>
</context>
<context>
    <name>HeadViewRenderer</name>
    <message>
        <source>queries</source>
        <translation>查询</translation>
    </message>
    <message>
        <source>keys</source>
        <translation>键</translation>
    </message>
    <message>
        <source>head %1</source>
        <translation>头 %1</translation>
    </message>
    <message>
        <source>%1 x %2 pairs: the lines of the first query only</source>
        <translation>%1 x %2 对：只画出第一个查询的连线</translation>
    </message>
</context>
<context>
    <name>MaskRenderer</name>
    <message>
        <source>allowed</source>
        <translation>允许</translation>
    </message>
    <message>
        <source>masked</source>
        <translation>已掩码</translation>
    </message>
    <message>
        <source>masked by causal/padding</source>
        <translation>被因果/填充掩码屏蔽</translation>
    </message>
    <message>
        <source>no allowed key</source>
        <translation>没有允许的键</translation>
    </message>
    <message>
        <source>masked by causal/padding/window</source>
        <translation>被因果/填充/窗口掩码屏蔽</translation>
    </message>
    <message>
        <source>window edge (1 key)</source>
        <translation>窗口边界（1 个键）</translation>
    </message>
    <message>
        <source>window edge (%1 keys)</source>
        <translation>窗口边界（%1 个键）</translation>
    </message>
</context>
<context>
    <name>TeachingRenderer</name>
    <message>
        <source>&lt;h3&gt;Why head %1 gives query %2 “%3” → key %4 “%5” the weight %6&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;为什么头 %1 中查询 %2“%3”→ 键 %4“%5”的权重是 %6&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;1. The query row q&lt;sub&gt;%1&lt;/sub&gt; = [%2] and the key row k&lt;sub&gt;%3&lt;/sub&gt; = [%4].&lt;/p&gt;</source>
        <translation>&lt;p&gt;1. 查询行 q&lt;sub&gt;%1&lt;/sub&gt; = [%2]，键行 k&lt;sub&gt;%3&lt;/sub&gt; = [%4]。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;2. Their dot product q·k = %1 = &lt;b&gt;%2&lt;/b&gt;.&lt;/p&gt;</source>
        <translation>&lt;p&gt;2. 二者的点积 q·k = %1 = &lt;b&gt;%2&lt;/b&gt;。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;3. Scaled by %1: score = %2 × %1 = &lt;b&gt;%3&lt;/b&gt;.&lt;/p&gt;</source>
        <translation>&lt;p&gt;3. 乘以缩放因子 %1：分数 = %2 × %1 = &lt;b&gt;%3&lt;/b&gt;。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;4. The mask allows this cell: the score stays.&lt;/p&gt;</source>
        <translation>&lt;p&gt;4. 掩码允许这个位置：分数保持不变。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;5. Every key of this row is masked and the fill is %1: AttnScope gives the whole row weight 0 (PyTorch would give NaN), and the row&apos;s output is 0.&lt;/p&gt;</source>
        <translation>&lt;p&gt;5. 这一行的所有键都被掩码，填充值为 %1：AttnScope 让整行权重为 0（PyTorch 会得到 NaN），这一行的输出也是 0。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;5. Every key of this row is masked, so every logit is the fill %1 and the softmax is uniform: each of the %2 keys gets 1/%2 = &lt;b&gt;%3&lt;/b&gt;.&lt;/p&gt;</source>
        <translation>&lt;p&gt;5. 这一行的所有键都被掩码，所以每个 logit 都是填充值 %1，softmax 结果是均匀的：%2 个键每个得到 1/%2 = &lt;b&gt;%3&lt;/b&gt;。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;5. Softmax over the row: exp(score − row max %1) = [%2], their sum %3; weight = %4 / %3 = &lt;b&gt;%5&lt;/b&gt;.&lt;/p&gt;</source>
        <translation>&lt;p&gt;5. 对这一行做 softmax：exp(分数 − 行最大值 %1) = [%2]，其和为 %3；权重 = %4 / %3 = &lt;b&gt;%5&lt;/b&gt;。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;A masked key&apos;s exp(%1 − row max) is 0: its weight is exactly 0.&lt;/p&gt;</source>
        <translation>&lt;p&gt;被掩码的键的 exp(%1 − 行最大值) 为 0：它的权重恰好为 0。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;6. The head&apos;s output row %1 is the weighted sum of the value rows: %2 = &lt;b&gt;[%3]&lt;/b&gt;.&lt;/p&gt;</source>
        <translation>&lt;p&gt;6. 该头的输出第 %1 行是各值行的加权和：%2 = &lt;b&gt;[%3]&lt;/b&gt;。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;Computing…&lt;/p&gt;</source>
        <translation>&lt;p&gt;正在计算…&lt;/p&gt;</translation>
    </message>
    <message>
        <source>X (query input)</source>
        <translation>X（查询输入）</translation>
    </message>
    <message>
        <source>Tq × d_q</source>
        <translation>Tq × d_q</translation>
    </message>
    <message>
        <source>X (key/value input)</source>
        <translation>X（键/值输入）</translation>
    </message>
    <message>
        <source>Tk × d_kv</source>
        <translation>Tk × d_kv</translation>
    </message>
    <message>
        <source>&lt;p&gt;Q: %1 × %2, K: %3 × %2, V: %3 × %4 (all heads side by side)&lt;/p&gt;</source>
        <translation>&lt;p&gt;Q：%1 × %2，K：%3 × %2，V：%3 × %4（所有头并排）&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;h3&gt;3. Split heads: head %1 takes columns %2..%3 of Q and K, %4..%5 of V&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;3. 拆分多头：头 %1 取 Q 和 K 的第 %2..%3 列、V 的第 %4..%5 列&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>Q_h</source>
        <translation>Q_h</translation>
    </message>
    <message>
        <source>Tq × dK</source>
        <translation>Tq × dK</translation>
    </message>
    <message>
        <source>K_h</source>
        <translation>K_h</translation>
    </message>
    <message>
        <source>Tk × dK</source>
        <translation>Tk × dK</translation>
    </message>
    <message>
        <source>V_h</source>
        <translation>V_h</translation>
    </message>
    <message>
        <source>Tk × dV</source>
        <translation>Tk × dV</translation>
    </message>
    <message>
        <source>Q_h·K_hᵀ</source>
        <translation>Q_h·K_hᵀ</translation>
    </message>
    <message>
        <source>Tq × Tk</source>
        <translation>Tq × Tk</translation>
    </message>
    <message>
        <source>&lt;h3&gt;5. Scaled by %1&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;5. 乘以缩放因子 %1&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>scores</source>
        <translation>分数</translation>
    </message>
    <message>
        <source>&lt;h3&gt;6. Masked (forbidden cells become %1)&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;6. 应用掩码（被禁止的位置变为 %1）&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>masked scores</source>
        <translation>掩码后的分数</translation>
    </message>
    <message>
        <source>weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>Tq × Tk, rows sum to 1</source>
        <translation>Tq × Tk，每行之和为 1</translation>
    </message>
    <message>
        <source>Tq × Tk, rows sum to 1; rows with no allowed key are 0</source>
        <translation>Tq × Tk，每行之和为 1；没有允许的键的行为 0</translation>
    </message>
    <message>
        <source>head output</source>
        <translation>头输出</translation>
    </message>
    <message>
        <source>Tq × dV</source>
        <translation>Tq × dV</translation>
    </message>
    <message>
        <source>&lt;h3&gt;9. Concatenate the heads: with one head, the context is its output&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;9. 拼接各头：只有一个头时，上下文就是它的输出&lt;/h3&gt;</translation>
    </message>
    <message numerus="yes">
        <source>&lt;h3&gt;9. Concatenate the %n heads&lt;/h3&gt;</source>
        <translation>
            <numerusform>&lt;h3&gt;9. 拼接 %n 个头&lt;/h3&gt;</numerusform>
        </translation>
    </message>
    <message>
        <source>context</source>
        <translation>上下文</translation>
    </message>
    <message>
        <source>Tq × H·dV</source>
        <translation>Tq × H·dV</translation>
    </message>
    <message>
        <source>output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>Tq × d_out</source>
        <translation>Tq × d_out</translation>
    </message>
    <message>
        <source>&lt;h3&gt;10. No W_O: the output is the context&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;10. 没有 W_O：输出就是上下文&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>shape %1 × %2</source>
        <translation>形状 %1 × %2</translation>
    </message>
    <message numerus="yes">
        <source>… %n more rows</source>
        <translation>
            <numerusform>… 还有 %n 行</numerusform>
        </translation>
    </message>
    <message>
        <source>&lt;h3&gt;1. Inputs&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;1. 输入&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>&lt;h3&gt;2. Projections %1, %2, %3&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;2. 线性投影 %1，%2，%3&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>&lt;h3&gt;7. Softmax over each row&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;7. 对每一行做 softmax&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>&lt;h3&gt;8. Weights·V_h&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;8. 权重·V_h&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>&lt;h3&gt;10. Output projection %1&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;10. 输出投影 %1&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>X_v (value input)</source>
        <translation>X_v（值输入）</translation>
    </message>
    <message>
        <source>Tk × d_v</source>
        <translation>Tk × d_v</translation>
    </message>
    <message>
        <source>&lt;h2&gt;Head 0 (the only head), step by step&lt;/h2&gt;</source>
        <translation>&lt;h2&gt;头 0（唯一的头），逐步计算&lt;/h2&gt;</translation>
    </message>
    <message>
        <source>&lt;h2&gt;Head %1 of heads 0 to %2, step by step&lt;/h2&gt;</source>
        <translation>&lt;h2&gt;头 %1（头编号 0 到 %2），逐步计算&lt;/h2&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;&lt;i&gt;The tutorial&apos;s 3-D weighted values tensor (softmax[i, j] · V[j] for every query i and key j) is shown only for a project of one head and one sequence, as in the tutorial.&lt;/i&gt;&lt;/p&gt;</source>
        <translation>&lt;p&gt;&lt;i&gt;教程中的三维加权值张量（对每个查询 i 和键 j 计算 softmax[i, j] · V[j]）只在单头、单个序列的项目中显示，与教程一致。&lt;/i&gt;&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;&lt;i&gt;The tutorial&apos;s 3-D weighted values tensor is not shown: its %1 numbers are more than the %2 that PyTorch prints in full.&lt;/i&gt;&lt;/p&gt;</source>
        <translation>&lt;p&gt;&lt;i&gt;未显示教程中的三维加权值张量：它有 %1 个数，超过了 PyTorch 完整打印的上限 %2 个。&lt;/i&gt;&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;h3&gt;8′. The tutorial&apos;s way: weighted values[j, i, :] = softmax[i, j] · V[j] (shape [Tk, Tq, dV] = [%1, %2, %3])&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;8′. 教程的做法：加权值 weighted values[j, i, :] = softmax[i, j] · V[j]（形状 [Tk, Tq, dV] = [%1, %2, %3]）&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;The tutorial computes &lt;code&gt;weighted_values = values[:, None] * softmax.T[:, :, None]&lt;/code&gt;: slice j holds value row V[j] scaled by each query&apos;s weight for key j. PyTorch prints it as:&lt;/p&gt;</source>
        <translation>&lt;p&gt;教程计算 &lt;code&gt;weighted_values = values[:, None] * softmax.T[:, :, None]&lt;/code&gt;：第 j 片是值行 V[j] 分别乘以每个查询给键 j 的权重。PyTorch 打印的结果是：&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;Summing over j, &lt;code&gt;outputs = weighted_values.sum(dim=0)&lt;/code&gt;, gives the head output: row i is Σ&lt;sub&gt;j&lt;/sub&gt; softmax[i, j] · V[j] (shape [Tq, dV] = [%1, %2]).&lt;/p&gt;</source>
        <translation>&lt;p&gt;沿 j 求和，即 &lt;code&gt;outputs = weighted_values.sum(dim=0)&lt;/code&gt;，得到该头的输出：第 i 行是 Σ&lt;sub&gt;j&lt;/sub&gt; softmax[i, j] · V[j]（形状 [Tq, dV] = [%1, %2]）。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;This sum is the head output of step 8 (largest difference %1).&lt;/p&gt;</source>
        <translation>&lt;p&gt;这个和就是第 8 步中该头的输出（最大差值 %1）。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>X_kv (key input)</source>
        <translation>X_kv（键输入）</translation>
    </message>
    <message>
        <source>&lt;p&gt;Select a cell in a heatmap, or click a number of a query-by-key table below, to have it explained at the end.&lt;/p&gt;</source>
        <translation>&lt;p&gt;在热力图中选择一个单元格，或点击下面查询×键表格中的一个数，末尾会解释它的计算过程。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;h3&gt;4–6. Q_h·K_hᵀ, scaled by %1, masked (forbidden cells become %2)&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;4–6. Q_h·K_hᵀ，乘以缩放因子 %1，应用掩码（被禁止的位置变为 %2）&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>causal: the key comes after the query</source>
        <translation>因果：键在查询之后</translation>
    </message>
    <message>
        <source>the key is padding</source>
        <translation>该键是填充</translation>
    </message>
    <message>
        <source>the custom mask forbids it</source>
        <translation>自定义掩码禁止它</translation>
    </message>
    <message>
        <source>&lt;p&gt;1. The query row q&lt;sub&gt;%1&lt;/sub&gt; = [%2] and the key row k&lt;sub&gt;%3&lt;/sub&gt; = [%4], both already rotated by RoPE: the query by its position %5, the key by its position %6 (relative distance %7).&lt;/p&gt;</source>
        <translation>&lt;p&gt;1. 查询行 q&lt;sub&gt;%1&lt;/sub&gt; = [%2]，键行 k&lt;sub&gt;%3&lt;/sub&gt; = [%4]，二者都已经过 RoPE 旋转：查询按其位置 %5，键按其位置 %6（相对距离 %7）。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;Query head %1 reads key/value head %2, which it shares with query heads %3 to %4.&lt;/p&gt;</source>
        <translation>&lt;p&gt;查询头 %1 读键值头 %2，它与查询头 %3 到 %4 共享这个键值头。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;3. Scaled by %1 and soft-capped at %2: score = %2·tanh(%3 × %1 / %2) = &lt;b&gt;%4&lt;/b&gt;.&lt;/p&gt;</source>
        <translation>&lt;p&gt;3. 乘以缩放因子 %1，再以 %2 软上限：分数 = %2·tanh(%3 × %1 / %2) = &lt;b&gt;%4&lt;/b&gt;。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;4. The mask forbids this cell (%1): its score becomes %2.&lt;/p&gt;</source>
        <translation>&lt;p&gt;4. 掩码禁止这个位置（%1）：它的分数变为 %2。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;5. Softmax over the row and the sink %6: exp(score − row max %1) = [%2] and exp(sink − row max) = %7, their sum %3; weight = %4 / %3 = &lt;b&gt;%5&lt;/b&gt;. The sink keeps %8 of the row, so the weights sum to %9.&lt;/p&gt;</source>
        <translation>&lt;p&gt;5. 对这一行和汇点 %6 做 softmax：exp(分数 − 行最大值 %1) = [%2]，exp(汇点 − 行最大值) = %7，其和为 %3；权重 = %4 / %3 = &lt;b&gt;%5&lt;/b&gt;。汇点占这一行的 %8，所以权重之和为 %9。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;Q: %1 × %2 (%3 query heads), K: %4 × %5, V: %4 × %6 (%7 key/value heads, each shared by %8 query heads)&lt;/p&gt;</source>
        <translation>&lt;p&gt;Q：%1 × %2（%3 个查询头），K：%4 × %5，V：%4 × %6（%7 个键值头，每个由 %8 个查询头共享）&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;h3&gt;3. Split heads: head %1 takes columns %2..%3 of Q and reads key/value head %4: columns %5..%6 of K, %7..%8 of V (shared with query heads %9)&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;3. 拆分多头：头 %1 取 Q 的第 %2..%3 列，读键值头 %4：K 的第 %5..%6 列、V 的第 %7..%8 列（与查询头 %9 共享）&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>&lt;h3&gt;3b. RoPE: rotate q and k by their positions&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;3b. RoPE：按位置旋转 q 和 k&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>angle per pair</source>
        <translation>每一对的角度</translation>
    </message>
    <message>
        <source>rows: pairs (d, d + %1); columns: θ&lt;sub&gt;d&lt;/sub&gt;, query %2 at %3, key %4 at %5</source>
        <translation>行：维度对 (d, d + %1)；列：θ&lt;sub&gt;d&lt;/sub&gt;、位于 %3 的查询 %2、位于 %5 的键 %4</translation>
    </message>
    <message>
        <source>Q_h after RoPE</source>
        <translation>RoPE 之后的 Q_h</translation>
    </message>
    <message>
        <source>K_h after RoPE</source>
        <translation>RoPE 之后的 K_h</translation>
    </message>
    <message>
        <source>scaled</source>
        <translation>缩放后</translation>
    </message>
    <message>
        <source>Tq × Tk, each row sums to 1 less the sink&apos;s share</source>
        <translation>Tq × Tk，每行之和为 1 减去汇点所占份额</translation>
    </message>
    <message>
        <source>&lt;h3&gt;5b. Soft-capped at %1: score = %1·tanh(scaled / %1)&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;5b. 以 %1 软上限：分数 = %1·tanh(缩放后 / %1)&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;Large scores flatten towards ±%1, so no key can take a row over alone.&lt;/p&gt;</source>
        <translation>&lt;p&gt;大分数被压向 ±%1，没有哪个键能独占一行。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Hide the scores without RoPE</source>
        <translation>隐藏不加 RoPE 的分数</translation>
    </message>
    <message>
        <source>Compare with the scores without RoPE</source>
        <translation>与不加 RoPE 的分数比较</translation>
    </message>
    <message>
        <source>&lt;h3&gt;Scores with and without RoPE&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;有无 RoPE 的分数&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>scaled, with RoPE</source>
        <translation>缩放后，有 RoPE</translation>
    </message>
    <message>
        <source>scaled, without RoPE</source>
        <translation>缩放后，无 RoPE</translation>
    </message>
    <message>
        <source>&lt;h3&gt;7. Softmax over each row with the head&apos;s sink %1&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;7. 对每一行连同该头的汇点 %1 做 softmax&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;The sink is one more logit in every row, never masked; its share is then dropped.&lt;/p&gt;</source>
        <translation>&lt;p&gt;汇点是每一行多出的一个 logit，从不被掩码；它的份额随后被丢弃。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>sink&apos;s share</source>
        <translation>汇点的份额</translation>
    </message>
    <message>
        <source>Tq × 1: 1 − row sum</source>
        <translation>Tq × 1：1 − 行之和</translation>
    </message>
    <message>
        <source>&lt;p&gt;Dimension d is paired with d + %1; the pair turns by position × θ&lt;sub&gt;d&lt;/sub&gt;, θ&lt;sub&gt;d&lt;/sub&gt; = %2&lt;sup&gt;−2d/%3&lt;/sup&gt;. A score then depends on the query and key positions only through their difference (here %4 − %5 = %6).&lt;/p&gt;</source>
        <translation>&lt;p&gt;第 d 维与第 d + %1 维成对；这一对旋转 位置 × θ&lt;sub&gt;d&lt;/sub&gt;，θ&lt;sub&gt;d&lt;/sub&gt; = %2&lt;sup&gt;−2d/%3&lt;/sup&gt;。于是分数只通过查询与键的位置之差依赖于位置（这里是 %4 − %5 = %6）。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>outside the sliding window of 1 key</source>
        <translation>在 1 个键的滑动窗口之外</translation>
    </message>
    <message>
        <source>outside the sliding window of %1 keys</source>
        <translation>在 %1 个键的滑动窗口之外</translation>
    </message>
    <message>
        <source>&lt;p&gt;Dimension d is paired with d + %1; the pair turns by position × θ&lt;sub&gt;d&lt;/sub&gt;, with each θ&lt;sub&gt;d&lt;/sub&gt; as the model&apos;s rope scaling sets it (table below). A score then depends on the query and key positions only through their difference (here %2 − %3 = %4).&lt;/p&gt;</source>
        <translation>&lt;p&gt;第 d 维与第 d + %1 维成对；这一对旋转 位置 × θ&lt;sub&gt;d&lt;/sub&gt;，每个 θ&lt;sub&gt;d&lt;/sub&gt; 由模型的 RoPE 缩放设定（见下表）。于是分数只通过查询与键的位置之差依赖于位置（这里是 %2 − %3 = %4）。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;Every cos and sin is multiplied by %1 (YaRN&apos;s attention factor), so each score gains its square.&lt;/p&gt;</source>
        <translation>&lt;p&gt;每个 cos 和 sin 都乘以 %1（YaRN 的注意力因子），所以每个分数乘以它的平方。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;Before the rotation, each head&apos;s q and k were normalised by their root mean square and multiplied by the learned norm weights (q/k RMSNorm).&lt;/p&gt;</source>
        <translation>&lt;p&gt;旋转之前，每个头的 q 和 k 先除以它们的均方根，再乘以学到的归一化权重（q/k RMSNorm）。&lt;/p&gt;</translation>
    </message>
</context>
<context>
    <name>attnscope::AboutDialog</name>
    <message>
        <source>About AttnScope</source>
        <translation>关于 AttnScope</translation>
    </message>
    <message>
        <source>&lt;h3&gt;AttnScope %1&lt;/h3&gt;&lt;p&gt;See every attention head: scaled dot-product attention computed for problems you type in or load, shown as heatmaps.&lt;/p&gt;&lt;p&gt;Built with Qt %2, running on Qt %3.&lt;br&gt;%4&lt;/p&gt;&lt;p&gt;Licence: none stated yet (the source has no licence file).&lt;/p&gt;</source>
        <translation>&lt;h3&gt;AttnScope %1&lt;/h3&gt;&lt;p&gt;看清每一个注意力头：对你输入或载入的问题计算缩放点积注意力，并以热力图显示。&lt;/p&gt;&lt;p&gt;使用 Qt %2 构建，运行于 Qt %3。&lt;br&gt;%4&lt;/p&gt;&lt;p&gt;许可证：尚未声明（源代码中没有许可证文件）。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Menu</source>
        <translation>菜单</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>操作</translation>
    </message>
    <message>
        <source>Shortcut</source>
        <translation>快捷键</translation>
    </message>
    <message>
        <source>Keyboard Shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
    <message>
        <source>AttnScope Guide</source>
        <translation>AttnScope 指南</translation>
    </message>
    <message>
        <source>AttnScope &amp;Guide</source>
        <translation>AttnScope 指南(&amp;G)</translation>
    </message>
    <message>
        <source>&amp;Keyboard Shortcuts</source>
        <translation>键盘快捷键(&amp;K)</translation>
    </message>
    <message>
        <source>&amp;About AttnScope</source>
        <translation>关于 AttnScope(&amp;A)</translation>
    </message>
    <message>
        <source>About &amp;Qt</source>
        <translation>关于 Qt(&amp;Q)</translation>
    </message>
</context>
<context>
    <name>attnscope::AlignmentView</name>
    <message>
        <source>The head whose cross-attention is drawn, or the mean of the layer&apos;s heads</source>
        <translation>绘制哪个头的交叉注意力，或该层各头的平均</translation>
    </message>
    <message>
        <source>Shift by one step</source>
        <translation>错开一步</translation>
    </message>
    <message>
        <source>The decoder&apos;s row i predicts the next target token, so row i is labelled with that token (the row after &lt;/s&gt; is dropped)</source>
        <translation>解码器第 i 行预测的是下一个目标词元，所以第 i 行标为那个词元（&lt;/s&gt; 之后的一行去掉）</translation>
    </message>
    <message>
        <source>Hide &lt;/s&gt;</source>
        <translation>隐藏 &lt;/s&gt;</translation>
    </message>
    <message>
        <source>The source&apos;s end-of-sentence token often takes most of the weight; hidden, each row is renormalised over the other source tokens</source>
        <translation>源句的句末词元常常占去大部分权重；隐藏后，每行在其余源词元上重新归一化</translation>
    </message>
    <message>
        <source>Mean of the heads</source>
        <translation>各头平均</translation>
    </message>
    <message>
        <source>Head %1</source>
        <translation>头 %1</translation>
    </message>
</context>
<context>
    <name>attnscope::AttentionController</name>
    <message>
        <source>Not enough memory for this attention file.</source>
        <translation>内存不足，无法处理此注意力文件。</translation>
    </message>
    <message>
        <source>The steps are those of tokens, and words are merged: turn off View &gt; Merge Sub-word Tokens into Words to see them.</source>
        <translation>分步计算针对的是词元，而现在词已合并：关闭“视图 &gt; 将子词词元合并为词”即可查看。</translation>
    </message>
    <message>
        <source>The steps of this layer need %1 for its tensors; the memory budget allows %2.</source>
        <translation>这一层的分步计算需要 %1 存放张量；内存预算只允许 %2。</translation>
    </message>
    <message>
        <source>The steps of this layer cannot be computed: %1</source>
        <translation>无法计算这一层的分步过程：%1</translation>
    </message>
    <message>
        <source>Memory ran out computing the steps of this layer.</source>
        <translation>计算这一层的分步过程时内存不足。</translation>
    </message>
</context>
<context>
    <name>attnscope::AttentionViews</name>
    <message>
        <source>Heads</source>
        <translation>所有头</translation>
    </message>
    <message>
        <source>Head view</source>
        <translation>头视图</translation>
    </message>
    <message>
        <source>Mean over heads</source>
        <translation>各头平均</translation>
    </message>
    <message>
        <source>Step by step</source>
        <translation>逐步计算</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Head statistics</source>
        <translation>头统计</translation>
    </message>
    <message>
        <source>Rollout</source>
        <translation>注意力展开</translation>
    </message>
    <message>
        <source>Head, pooled</source>
        <translation>头（池化）</translation>
    </message>
    <message>
        <source>Find Heads Like This</source>
        <translation>查找相似的头</translation>
    </message>
</context>
<context>
    <name>attnscope::Autosaver</name>
    <message>
        <source>Cannot create %1</source>
        <translation>无法创建 %1</translation>
    </message>
</context>
<context>
    <name>attnscope::BackendMenu</name>
    <message>
        <source>&amp;Backend</source>
        <translation>后端(&amp;B)</translation>
    </message>
    <message>
        <source>&amp;Automatic (GPU if available)</source>
        <translation>自动（有 GPU 时使用 GPU）(&amp;A)</translation>
    </message>
    <message>
        <source>&amp;CPU (Eigen)</source>
        <translation>&amp;CPU（Eigen）</translation>
    </message>
    <message>
        <source>&amp;Vulkan</source>
        <translation>&amp;Vulkan</translation>
    </message>
    <message>
        <source>Vulkan &amp;device</source>
        <translation>Vulkan 设备(&amp;D)</translation>
    </message>
    <message>
        <source>CPU: %1</source>
        <translation>CPU：%1</translation>
    </message>
    <message>
        <source>Vulkan %1: %2</source>
        <translation>Vulkan %1：%2</translation>
    </message>
    <message>
        <source>No Vulkan device: %1</source>
        <translation>没有 Vulkan 设备：%1</translation>
    </message>
    <message>
        <source>Automatic uses Vulkan %1</source>
        <translation>自动模式使用 Vulkan %1</translation>
    </message>
    <message>
        <source>Automatic uses the CPU: %1</source>
        <translation>自动模式使用 CPU：%1</translation>
    </message>
</context>
<context>
    <name>attnscope::BatchBar</name>
    <message>
        <source>Sequence </source>
        <translation>序列 </translation>
    </message>
    <message>
        <source>Sequence</source>
        <translation>序列</translation>
    </message>
    <message>
        <source>This project holds a batch of %1 sequences; sequence %2 is shown (counting from 0). Edits change the shown sequence; saving keeps every sequence.</source>
        <translation>此项目包含一个由 %1 个序列组成的批次；当前显示序列 %2（从 0 开始计数）。编辑只修改当前显示的序列；保存时会保留所有序列。</translation>
    </message>
    <message>
        <source>The shown sequence no longer has the shape of the other %1 sequences: saving writes it alone, without the others.</source>
        <translation>当前显示的序列与其余 %1 个序列的形状已不一致：保存时只会写入这一个序列，不包含其他序列。</translation>
    </message>
    <message>
        <source>&lt;p style=&apos;color:#0b4f8a&apos;&gt;A batch of %1 sequences; below is sequence %2 alone. In the tutorials&apos; code the tensors carry the batch first: Q %3 [B, H, Tq, dK], K %4 and V %5 [B, H, Tk, d], scores and weights %6 [B, H, Tq, Tk], context %7 [B, Tq, H·dV], output %8 [B, Tq, d_out].&lt;/p&gt;</source>
        <translation>&lt;p style=&apos;color:#0b4f8a&apos;&gt;一个由 %1 个序列组成的批次；下面只显示序列 %2。在教程的代码中，张量的第一维是批次：Q %3 [B, H, Tq, dK]，K %4 和 V %5 [B, H, Tk, d]，分数和权重 %6 [B, H, Tq, Tk]，上下文 %7 [B, Tq, H·dV]，输出 %8 [B, Tq, d_out]。&lt;/p&gt;</translation>
    </message>
</context>
<context>
    <name>attnscope::CandidatesChart</name>
    <message>
        <source>probability</source>
        <translation>概率</translation>
    </message>
    <message>
        <source>after temperature, top-k, top-p</source>
        <translation>经温度、top-k、top-p 之后</translation>
    </message>
    <message>
        <source>Generate or step to see the candidates of each token.</source>
        <translation>点击“生成”或“单步”，查看每个词元的候选。</translation>
    </message>
</context>
<context>
    <name>attnscope::ColorMap</name>
    <message>
        <source>Viridis</source>
        <translation>Viridis</translation>
    </message>
    <message>
        <source>Magma</source>
        <translation>Magma</translation>
    </message>
    <message>
        <source>Cividis</source>
        <translation>Cividis</translation>
    </message>
    <message>
        <source>Grey</source>
        <translation>灰度</translation>
    </message>
    <message>
        <source>Diverging (blue-red)</source>
        <translation>发散（蓝-红）</translation>
    </message>
</context>
<context>
    <name>attnscope::ColorScale</name>
    <message>
        <source>Linear</source>
        <translation>线性</translation>
    </message>
    <message>
        <source>Logarithmic</source>
        <translation>对数</translation>
    </message>
    <message>
        <source>Percentile (equal areas)</source>
        <translation>百分位（等面积）</translation>
    </message>
</context>
<context>
    <name>attnscope::CompareDialog</name>
    <message>
        <source>Compare</source>
        <translation>比较</translation>
    </message>
    <message>
        <source>A</source>
        <translation>A</translation>
    </message>
    <message>
        <source>B</source>
        <translation>B</translation>
    </message>
    <message>
        <source>File…</source>
        <translation>文件…</translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation>文件夹…</translation>
    </message>
    <message>
        <source>&amp;Run:</source>
        <translation>运行(&amp;R)：</translation>
    </message>
    <message>
        <source>The text a model folder reads</source>
        <translation>模型文件夹读入的文本</translation>
    </message>
    <message>
        <source>&amp;Text:</source>
        <translation>文本(&amp;T)：</translation>
    </message>
    <message>
        <source>Model folder</source>
        <translation>模型文件夹</translation>
    </message>
    <message>
        <source>Compare two runs cell by cell: two texts on one model, one text on two models of the same shape, two attention files or two projects. The views then show B − A.</source>
        <translation>逐格比较两次运行：同一模型上的两段文本、同形状的两个模型上的同一段文本、两个注意力文件或两个项目。各视图随后显示 B − A。</translation>
    </message>
    <message>
        <source>An attention file (.npy, .npz, .safetensors), a project (.attnscope.json) or a model folder</source>
        <translation>注意力文件（.npy、.npz、.safetensors）、项目（.attnscope.json）或模型文件夹</translation>
    </message>
    <message>
        <source>Attention file or project</source>
        <translation>注意力文件或项目</translation>
    </message>
    <message>
        <source>Attention files, Q/K dumps and projects (*.npy *.npz *.safetensors attnscope-qk.json *.attnscope.json);;All files (*)</source>
        <translation>注意力文件、Q/K 转储和项目 (*.npy *.npz *.safetensors attnscope-qk.json *.attnscope.json);;所有文件 (*)</translation>
    </message>
</context>
<context>
    <name>attnscope::ComparisonSource</name>
    <message>
        <source>%1:</source>
        <translation>%1：</translation>
    </message>
    <message>
        <source>Text the model reads for %1</source>
        <translation>模型为 %1 读入的文本</translation>
    </message>
    <message>
        <source>Both texts must give as many tokens to be compared position by position; where their tokens differ, the labels say both (“cat→dog”).</source>
        <translation>两段文本须切分出同样多的词元才能逐位置比较；词元不同之处，标签会同时写出两者（“cat→dog”）。</translation>
    </message>
    <message>
        <source>B − A</source>
        <translation>B − A</translation>
    </message>
    <message>
        <source>A</source>
        <translation>A</translation>
    </message>
    <message>
        <source>B</source>
        <translation>B</translation>
    </message>
    <message>
        <source>What every view shows (the heads, the enlarged head, the mean, the model view) and what Export Figure exports: the difference or either run.</source>
        <translation>各视图（各头、放大的头、平均、模型视图）显示的内容，以及“导出图形”导出的内容：差值或其中一次运行。</translation>
    </message>
    <message>
        <source>Show:</source>
        <translation>显示：</translation>
    </message>
    <message>
        <source>Side by side</source>
        <translation>并排</translation>
    </message>
    <message>
        <source>The current head of A, of B and of B − A next to each other, above the views.</source>
        <translation>在视图上方并排显示 A、B 和 B − A 的当前头。</translation>
    </message>
    <message>
        <source>Comparing %1 and %2…</source>
        <translation>正在比较 %1 和 %2…</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Memory ran out comparing A and B.</source>
        <translation>比较 A 和 B 时内存不足。</translation>
    </message>
    <message>
        <source>The views show the last comparison: A and B as they are now cannot be compared.</source>
        <translation>各视图显示上一次的比较：A 和 B 现在的内容无法比较。</translation>
    </message>
    <message>
        <source>Differences</source>
        <translation>差异</translation>
    </message>
    <message>
        <source>Every head&apos;s change from A to B, the most changed first; a click shows that head.</source>
        <translation>每个头从 A 到 B 的变化，变化最大的在前；单击显示该头。</translation>
    </message>
    <message>
        <source>Comparing %1 and %2</source>
        <translation>比较 %1 和 %2</translation>
    </message>
    <message>
        <source>Comparison on %1 — AttnScope</source>
        <translation>%1 上的比较 — AttnScope</translation>
    </message>
    <message>
        <source>Comparison of %1 and %2 — AttnScope</source>
        <translation>%1 与 %2 的比较 — AttnScope</translation>
    </message>
    <message>
        <source>comparison-a</source>
        <translation>comparison-a</translation>
    </message>
    <message>
        <source>comparison-b</source>
        <translation>comparison-b</translation>
    </message>
    <message>
        <source>comparison-difference</source>
        <translation>comparison-difference</translation>
    </message>
    <message>
        <source>Comparison of two texts on %1</source>
        <translation>%1 上两段文本的比较</translation>
    </message>
    <message>
        <source>Comparison: A %1, B %2</source>
        <translation>比较：A %1，B %2</translation>
    </message>
    <message>
        <source>%1 (as edited)</source>
        <translation>%1（编辑后）</translation>
    </message>
    <message>
        <source>%1: %2 (as edited)</source>
        <translation>%1：%2（编辑后）</translation>
    </message>
    <message>
        <source>Comparison of two states of %1</source>
        <translation>%1 两个状态的比较</translation>
    </message>
</context>
<context>
    <name>attnscope::ComparisonStatsModel</name>
    <message>
        <source>The layer, from 0.</source>
        <translation>层，从 0 开始。</translation>
    </message>
    <message>
        <source>Layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>The head, from 0.</source>
        <translation>头，从 0 开始。</translation>
    </message>
    <message>
        <source>Head</source>
        <translation>头</translation>
    </message>
    <message>
        <source>Mean over query rows of half the summed |B − A|: 0 where each row attends alike, 1 where A&apos;s and B&apos;s rows attend to different keys.</source>
        <translation>各查询行上 |B − A| 之和的一半的平均：每行关注相同时为 0，A 与 B 的行关注不同的键时为 1。</translation>
    </message>
    <message>
        <source>Total variation</source>
        <translation>总变差</translation>
    </message>
    <message>
        <source>The largest |B − A| of any cell.</source>
        <translation>所有格中最大的 |B − A|。</translation>
    </message>
    <message>
        <source>Max |Δ|</source>
        <translation>最大 |Δ|</translation>
    </message>
    <message>
        <source>The mean |B − A| over every cell.</source>
        <translation>所有格上 |B − A| 的平均。</translation>
    </message>
    <message>
        <source>Mean |Δ|</source>
        <translation>平均 |Δ|</translation>
    </message>
    <message>
        <source>A&apos;s mean row entropy (natural log): high where a head spreads its attention.</source>
        <translation>A 的平均行熵（自然对数）：头的注意力越分散越高。</translation>
    </message>
    <message>
        <source>Entropy A</source>
        <translation>熵 A</translation>
    </message>
    <message>
        <source>B&apos;s mean row entropy (natural log).</source>
        <translation>B 的平均行熵（自然对数）。</translation>
    </message>
    <message>
        <source>Entropy B</source>
        <translation>熵 B</translation>
    </message>
</context>
<context>
    <name>attnscope::ComputeController</name>
    <message>
        <source>out of memory while computing (%1 of intermediate tensors): make the project smaller</source>
        <translation>计算时内存不足（中间张量需要 %1）：请缩小项目</translation>
    </message>
</context>
<context>
    <name>attnscope::CoreError</name>
    <message>
        <source>%1: expected %2, found %3</source>
        <translation>%1：应为%2，实际为%3</translation>
    </message>
    <message>
        <source>%1: missing (expected %2)</source>
        <translation>%1：缺失（应为%2）</translation>
    </message>
    <message>
        <source>format: expected &quot;attnscope&quot;, found %1</source>
        <translation>format：应为 &quot;attnscope&quot;，实际为%1</translation>
    </message>
    <message>
        <source>version: expected 1, found %1</source>
        <translation>version：应为 1，实际为 %1</translation>
    </message>
    <message>
        <source>version: expected 1, found %1 (written by a newer AttnScope)</source>
        <translation>version：应为 1，实际为 %1（由更新版本的 AttnScope 写入）</translation>
    </message>
    <message>
        <source>%1: expected a finite float32 number, found %2</source>
        <translation>%1：应为有限的 float32 数，实际为 %2</translation>
    </message>
    <message>
        <source>%1: expected at least one row, found an empty matrix</source>
        <translation>%1：应至少有一行，实际为空矩阵</translation>
    </message>
    <message>
        <source>%1: expected at least one number, found an empty row</source>
        <translation>%1：应至少有一个数，实际为空行</translation>
    </message>
    <message>
        <source>%1: expected %2 numbers like row 0, found %3</source>
        <translation>%1：应与第 0 行一样有 %2 个数，实际为 %3 个</translation>
    </message>
    <message>
        <source>%1: expected %2 labels (one per row of x), found %3</source>
        <translation>%1：应有 %2 个标签（x 的每行一个），实际为 %3 个</translation>
    </message>
    <message>
        <source>%1: expected 0 or 1, found %2</source>
        <translation>%1：应为 0 或 1，实际为 %2</translation>
    </message>
    <message>
        <source>%1: expected a whole number of at least 1, found %2</source>
        <translation>%1：应为不小于 1 的整数，实际为 %2</translation>
    </message>
    <message>
        <source>%1: %2 is larger than the supported %3</source>
        <translation>%1：%2 超过了支持的上限 %3</translation>
    </message>
    <message>
        <source>%1: expected a finite number, found %2</source>
        <translation>%1：应为有限数，实际为 %2</translation>
    </message>
    <message>
        <source>%1: expected %2 (%3), found %4</source>
        <translation>%1：形状应为 %2（%3），实际为 %4</translation>
    </message>
    <message>
        <source>%1: expected %2 values (%3), found %4</source>
        <translation>%1：应有 %2 个值（%3），实际为 %4 个</translation>
    </message>
    <message>
        <source>%1: expected at least one token and one dimension, found %2</source>
        <translation>%1：应至少有一个词元和一个维度，实际为 %2</translation>
    </message>
    <message>
        <source>weights.oBias: given without weights.o (an output bias needs an output projection)</source>
        <translation>weights.oBias：给出了偏置却没有 weights.o（输出偏置需要输出投影）</translation>
    </message>
    <message>
        <source>mask.keyPadding: expected %1 values (one per key token), found %2</source>
        <translation>mask.keyPadding：应有 %1 个值（每个键词元一个），实际为 %2 个</translation>
    </message>
    <message>
        <source>mask.allowed: expected only 0 and 1, found %1</source>
        <translation>mask.allowed：只能是 0 和 1，实际出现 %1</translation>
    </message>
    <message>
        <source>size: this problem needs %1 for its intermediate tensors; this machine allows %2</source>
        <translation>大小：该问题的中间张量需要 %1 内存；本机允许 %2</translation>
    </message>
    <message>
        <source>size: this problem needs %1 for %2; this machine allows %3</source>
        <translation>大小：该问题的%2需要 %1 内存；本机允许 %3</translation>
    </message>
    <message>
        <source>%1: cannot open the file</source>
        <translation>%1：无法打开文件</translation>
    </message>
    <message>
        <source>%1: cannot open the file (%2)</source>
        <translation>%1：无法打开文件（%2）</translation>
    </message>
    <message>
        <source>%1: is a directory, not a file</source>
        <translation>%1：这是一个目录，不是文件</translation>
    </message>
    <message>
        <source>%1: the file is %2; files up to %3 can be read on this machine</source>
        <translation>%1：文件大小为 %2；本机最多可读取 %3 的文件</translation>
    </message>
    <message>
        <source>%1: not a regular file</source>
        <translation>%1：不是普通文件</translation>
    </message>
    <message>
        <source>%1: not a text file (a NUL byte at offset %2)</source>
        <translation>%1：不是文本文件（偏移 %2 处有 NUL 字节）</translation>
    </message>
    <message>
        <source>no Vulkan driver: the loader&apos;s manifest %1 is not valid JSON (%2); the loader reports this as VK_ERROR_OUT_OF_HOST_MEMORY</source>
        <translation>没有 Vulkan 驱动：加载器的清单文件 %1 不是有效的 JSON（%2）；加载器会把这种情况报告为 VK_ERROR_OUT_OF_HOST_MEMORY</translation>
    </message>
    <message>
        <source>%1: the file changed on disk; reopen it</source>
        <translation>%1：文件已在磁盘上被修改，请重新打开</translation>
    </message>
    <message>
        <source>not a .npy file (missing the \x93NUMPY magic)</source>
        <translation>不是 .npy 文件（缺少 \x93NUMPY 标识）</translation>
    </message>
    <message>
        <source>truncated .npy header</source>
        <translation>.npy 文件头不完整</translation>
    </message>
    <message>
        <source>unsupported .npy dtype %1 (expected &apos;&lt;f4&apos; or &apos;&lt;f8&apos;)</source>
        <translation>不支持的 .npy 数据类型 %1（应为 &apos;&lt;f4&apos; 或 &apos;&lt;f8&apos;）</translation>
    </message>
    <message>
        <source>no array named &quot;attentions&quot; among %1 (%2)</source>
        <translation>在 %1 个数组（%2）中没有名为 &quot;attentions&quot; 的数组</translation>
    </message>
    <message>
        <source>shape %1: expected [layers, heads, queries, keys], [heads, queries, keys] or [queries, keys]</source>
        <translation>形状 %1：应为 [层, 头, 查询, 键]、[头, 查询, 键] 或 [查询, 键]</translation>
    </message>
    <message>
        <source>shape %1: every size must be at least 1</source>
        <translation>形状 %1：每一维的大小都必须至少为 1</translation>
    </message>
    <message>
        <source>value %1 (attention weights must be finite numbers)</source>
        <translation>值 %1（注意力权重必须是有限数）</translation>
    </message>
    <message>
        <source>%1: cannot open the file: %2</source>
        <translation>%1：无法打开文件：%2</translation>
    </message>
    <message>
        <source>dtype %1 is not an attention dtype (expected &apos;&lt;f2&apos;, &apos;&lt;f4&apos; or &apos;&lt;f8&apos;: little-endian float16, 32 or 64)</source>
        <translation>数据类型 %1 不能用于注意力权重（应为 &apos;&lt;f2&apos;、&apos;&lt;f4&apos; 或 &apos;&lt;f8&apos;：小端 float16、32 或 64）</translation>
    </message>
    <message>
        <source>not valid JSON: %1</source>
        <translation>不是有效的 JSON：%1</translation>
    </message>
    <message>
        <source>not valid JSON: %1 (NaN and Infinity are not numbers in JSON; every value must be finite)</source>
        <translation>不是有效的 JSON：%1（NaN 和 Infinity 在 JSON 中不是数字；每个值都必须是有限数）</translation>
    </message>
    <message>
        <source>not valid JSON</source>
        <translation>不是有效的 JSON</translation>
    </message>
    <message>
        <source>%1: binary values are not JSON</source>
        <translation>%1：二进制值不是 JSON</translation>
    </message>
    <message>
        <source>%1: given twice (a key may appear only once in an object)</source>
        <translation>%1：出现了两次（对象中的键只能出现一次）</translation>
    </message>
    <message>
        <source>%1: the number %2 is out of range (numbers must be finite; float32 holds at most 3.4e38)</source>
        <translation>%1：数字 %2 超出范围（数字必须是有限数；float32 最大为 3.4e38）</translation>
    </message>
    <message>
        <source>file: more than %1 values, more than this machine can hold parsed</source>
        <translation>文件：超过 %1 个值，超出本机解析后能容纳的数量</translation>
    </message>
    <message>
        <source>%1: nested %2 levels deep, more than the %3 allowed</source>
        <translation>%1：嵌套了 %2 层，超过允许的 %3 层</translation>
    </message>
    <message>
        <source>file: out of memory while reading the JSON</source>
        <translation>文件：读取 JSON 时内存不足</translation>
    </message>
    <message>
        <source>unsupported .npy version %1</source>
        <translation>不支持的 .npy 版本 %1</translation>
    </message>
    <message>
        <source>truncated .npy header: the header length at offset 8 says %1 bytes, the file has %2</source>
        <translation>.npy 文件头不完整：偏移 8 处的文件头长度为 %1 字节，文件只有 %2 字节</translation>
    </message>
    <message>
        <source>truncated .npy header: expected %1 bytes, found %2</source>
        <translation>.npy 文件头不完整：应为 %1 字节，实际为 %2 字节</translation>
    </message>
    <message>
        <source>bad .npy header: no &apos;%1&apos; entry</source>
        <translation>.npy 文件头有误：没有“%1”项</translation>
    </message>
    <message>
        <source>bad .npy header: no readable &apos;%1&apos; entry</source>
        <translation>.npy 文件头有误：没有可读的“%1”项</translation>
    </message>
    <message>
        <source>unsupported .npy layout: only C order is read</source>
        <translation>不支持的 .npy 布局：只能读取 C 顺序</translation>
    </message>
    <message>
        <source>bad .npy shape %1 (expected a tuple of whole numbers)</source>
        <translation>.npy 形状 %1 有误（应为由整数组成的元组）</translation>
    </message>
    <message>
        <source>bad .npy shape: more than 32 dimensions</source>
        <translation>.npy 形状有误：超过 32 个维度</translation>
    </message>
    <message>
        <source>unsupported .npy dtype %1 (expected &apos;&lt;f2&apos;, &apos;&lt;f4&apos; or &apos;&lt;f8&apos;: little-endian float16, 32 or 64)</source>
        <translation>不支持的 .npy 数据类型 %1（应为 &apos;&lt;f2&apos;、&apos;&lt;f4&apos; 或 &apos;&lt;f8&apos;：小端 float16、32 或 64）</translation>
    </message>
    <message>
        <source>truncated .npy data: the shape %1 needs %2 bytes, found %3</source>
        <translation>.npy 数据不完整：形状 %1 需要 %2 字节，实际为 %3 字节</translation>
    </message>
    <message>
        <source>truncated .npy data: the shape needs %1 bytes, found %2</source>
        <translation>.npy 数据不完整：该形状需要 %1 字节，实际为 %2 字节</translation>
    </message>
    <message>
        <source>not a ZIP archive: %1 bytes</source>
        <translation>不是 ZIP 压缩包：只有 %1 字节</translation>
    </message>
    <message>
        <source>not a ZIP archive: no end-of-directory record</source>
        <translation>不是 ZIP 压缩包：没有目录结束记录</translation>
    </message>
    <message>
        <source>not a safetensors file: %1 bytes, shorter than the 8-byte header length</source>
        <translation>不是 safetensors 文件：只有 %1 字节，短于 8 字节的文件头长度字段</translation>
    </message>
    <message>
        <source>header length %1 at offset 0 runs past the end of the file (%2 bytes)</source>
        <translation>偏移 0 处的文件头长度 %1 超出了文件末尾（文件共 %2 字节）</translation>
    </message>
    <message>
        <source>header length %1 is larger than the format&apos;s 100 MiB limit</source>
        <translation>文件头长度 %1 超过了该格式 100 MiB 的上限</translation>
    </message>
    <message>
        <source>not a safetensors file: the header at offset 8 is not a JSON object</source>
        <translation>不是 safetensors 文件：偏移 8 处的文件头不是 JSON 对象</translation>
    </message>
    <message>
        <source>Vulkan backend unavailable: %1</source>
        <translation>Vulkan 后端不可用：%1</translation>
    </message>
    <message>
        <source>Vulkan failed to start (%1): using the CPU</source>
        <translation>Vulkan 启动失败（%1）：改用 CPU</translation>
    </message>
    <message>
        <source>%1: using the CPU</source>
        <translation>%1：改用 CPU</translation>
    </message>
    <message>
        <source>the only Vulkan device is %1, slower than the Eigen engine: using the CPU (--backend vulkan or ATTNSCOPE_VULKAN_DEVICE uses it anyway)</source>
        <translation>唯一的 Vulkan 设备是 %1，比 Eigen 引擎慢：改用 CPU（--backend vulkan 或 ATTNSCOPE_VULKAN_DEVICE 仍会使用它）</translation>
    </message>
    <message>
        <source>%1: computing on the CPU from now on</source>
        <translation>%1：从现在起在 CPU 上计算</translation>
    </message>
    <message>
        <source>%1: computed on the CPU this time (the GPU is still used for the next problem)</source>
        <translation>%1：这次在 CPU 上计算（下一个问题仍使用 GPU）</translation>
    </message>
    <message>
        <source>ZIP member %1: corrupt deflate data (%2 of %3 bytes inflated)</source>
        <translation>ZIP 成员 %1：deflate 数据已损坏（只解压出 %3 字节中的 %2 字节）</translation>
    </message>
    <message>
        <source>ZIP member %1: compression method %2 is not supported (stored or deflated)</source>
        <translation>ZIP 成员 %1：不支持压缩方法 %2（只支持存储或 deflate）</translation>
    </message>
    <message>
        <source>ZIP member %1: CRC-32 mismatch (the data is corrupt)</source>
        <translation>ZIP 成员 %1：CRC-32 校验不符（数据已损坏）</translation>
    </message>
    <message>
        <source>ZIP64 end-of-directory record: offset %1 is not one</source>
        <translation>ZIP64 目录结束记录：偏移 %1 处并没有这条记录</translation>
    </message>
    <message>
        <source>ZIP directory at offset %1 (%2 bytes) runs past the end of the file</source>
        <translation>ZIP 目录（偏移 %1，%2 字节）超出了文件末尾</translation>
    </message>
    <message>
        <source>ZIP directory: %1 members cannot fit in %2 bytes</source>
        <translation>ZIP 目录：%2 字节容纳不下 %1 个成员</translation>
    </message>
    <message>
        <source>ZIP directory entry %1 at offset %2 is not one</source>
        <translation>ZIP 目录第 %1 项（偏移 %2）不是有效的目录项</translation>
    </message>
    <message>
        <source>ZIP directory entry %1 runs past the directory</source>
        <translation>ZIP 目录第 %1 项超出了目录末尾</translation>
    </message>
    <message>
        <source>ZIP member %1: no local header at offset %2</source>
        <translation>ZIP 成员 %1：偏移 %2 处没有本地文件头</translation>
    </message>
    <message>
        <source>ZIP member %1: its %2 bytes at offset %3 run past the end of the file (%4 bytes)</source>
        <translation>ZIP 成员 %1：偏移 %3 处的 %2 字节超出了文件末尾（文件共 %4 字节）</translation>
    </message>
    <message>
        <source>ZIP member %1: %2 bytes uncompressed, more than the %3 this machine allows</source>
        <translation>ZIP 成员 %1：解压后有 %2 字节，超过本机允许的 %3 字节</translation>
    </message>
    <message>
        <source>ZIP member %1: claims %2 bytes from %3 compressed, more than deflate can produce</source>
        <translation>ZIP 成员 %1：声称由 %3 字节压缩数据解压出 %2 字节，超出了 deflate 所能产生的大小</translation>
    </message>
    <message>
        <source>ZIP member %1: stored, but its sizes differ</source>
        <translation>ZIP 成员 %1：以不压缩方式存储，但两个大小不一致</translation>
    </message>
    <message>
        <source>header: expected a JSON object</source>
        <translation>文件头：应为 JSON 对象</translation>
    </message>
    <message>
        <source>__metadata__: expected an object of strings</source>
        <translation>__metadata__：应为由字符串组成的对象</translation>
    </message>
    <message>
        <source>__metadata__.%1: expected a string</source>
        <translation>__metadata__.%1：应为字符串</translation>
    </message>
    <message>
        <source>tensor &quot;%1&quot;: expected {&quot;dtype&quot;, &quot;shape&quot;, &quot;data_offsets&quot;}</source>
        <translation>张量“%1”：应为 {&quot;dtype&quot;, &quot;shape&quot;, &quot;data_offsets&quot;}</translation>
    </message>
    <message>
        <source>tensor &quot;%1&quot;: dtype is not a string</source>
        <translation>张量“%1”：dtype 不是字符串</translation>
    </message>
    <message>
        <source>tensor &quot;%1&quot;: shape is not an array of at most 8 sizes</source>
        <translation>张量“%1”：shape 不是由至多 8 个尺寸组成的数组</translation>
    </message>
    <message>
        <source>tensor &quot;%1&quot;: shape holds %2, not a size</source>
        <translation>张量“%1”：shape 中的 %2 不是尺寸</translation>
    </message>
    <message>
        <source>tensor &quot;%1&quot;: shape has more elements than can be addressed</source>
        <translation>张量“%1”：shape 的元素个数多到无法寻址</translation>
    </message>
    <message>
        <source>tensor &quot;%1&quot;: data_offsets is not [begin, end] with begin &lt;= end</source>
        <translation>张量“%1”：data_offsets 不是满足 begin &lt;= end 的 [begin, end]</translation>
    </message>
    <message>
        <source>tensor &quot;%1&quot;: data_offsets end %2 is past the %3 bytes of data</source>
        <translation>张量“%1”：data_offsets 的结束位置 %2 超出了 %3 字节的数据</translation>
    </message>
    <message>
        <source>tensor &quot;%1&quot;: %2 %3 values need %4 bytes, data_offsets give %5</source>
        <translation>张量“%1”：%3 个 %2 值需要 %4 字节，data_offsets 给出的是 %5 字节</translation>
    </message>
    <message>
        <source>tensor &quot;%1&quot;: data_offsets [%2, %3] overlap the tensor before it (which ends at %4)</source>
        <translation>张量“%1”：data_offsets [%2, %3] 与前一个张量重叠（前一个张量结束于 %4）</translation>
    </message>
    <message>
        <source>data: bytes %1 to %2 belong to no tensor</source>
        <translation>数据：第 %1 到 %2 字节不属于任何张量</translation>
    </message>
    <message>
        <source>data: %1 bytes after the last tensor belong to none</source>
        <translation>数据：最后一个张量之后的 %1 字节不属于任何张量</translation>
    </message>
    <message>
        <source>no tensor named &quot;attentions&quot; among %1</source>
        <translation>在 %1 个张量中没有名为“attentions”的张量</translation>
    </message>
    <message>
        <source>tensor %1 has dtype %2 (expected F16, BF16, F32 or F64)</source>
        <translation>张量 %1 的 dtype 为 %2（应为 F16、BF16、F32 或 F64）</translation>
    </message>
    <message>
        <source>__metadata__.%1: expected a JSON list of strings</source>
        <translation>__metadata__.%1：应为字符串列表（JSON 文本）</translation>
    </message>
    <message>
        <source>not valid JSON: parse error at line %1, column %2 (offset %3): unexpected &apos;%4&apos;</source>
        <translation>不是有效的 JSON：第 %1 行第 %2 列（偏移 %3）解析错误：意外的 &apos;%4&apos;</translation>
    </message>
    <message>
        <source>not valid JSON: parse error at line %1, column %2 (offset %3): unexpected &apos;%4&apos; (NaN and Infinity are not numbers in JSON; every value must be finite)</source>
        <translation>不是有效的 JSON：第 %1 行第 %2 列（偏移 %3）解析错误：意外的 &apos;%4&apos;（NaN 和 Infinity 在 JSON 中不是数字；每个值都必须是有限数）</translation>
    </message>
    <message>
        <source>not valid JSON: parse error at line %1, column %2 (offset %3): the text ends before the JSON is complete</source>
        <translation>不是有效的 JSON：第 %1 行第 %2 列（偏移 %3）解析错误：JSON 还不完整，文本就结束了</translation>
    </message>
    <message>
        <source>no Vulkan loader: cannot open %1</source>
        <translation>无法打开 Vulkan 加载器 %1</translation>
    </message>
    <message>
        <source>no Vulkan loader: cannot open %1 (%2)</source>
        <translation>无法打开 Vulkan 加载器 %1（系统报告：%2）</translation>
    </message>
    <message>
        <source>no Vulkan loader: %1 has no vkGetInstanceProcAddr</source>
        <translation>Vulkan 加载器不可用：%1 中没有 vkGetInstanceProcAddr</translation>
    </message>
    <message>
        <source>Vulkan loader %1 lacks %2</source>
        <translation>Vulkan 加载器 %1 缺少函数 %2</translation>
    </message>
    <message>
        <source>Vulkan instance lacks %1</source>
        <translation>Vulkan 实例缺少函数 %1</translation>
    </message>
    <message>
        <source>Vulkan device lacks %1</source>
        <translation>Vulkan 设备缺少函数 %1</translation>
    </message>
    <message>
        <source>no Vulkan driver: vkCreateInstance found no compatible driver (VK_ERROR_INCOMPATIBLE_DRIVER)</source>
        <translation>没有 Vulkan 驱动：vkCreateInstance 找不到兼容的驱动（VK_ERROR_INCOMPATIBLE_DRIVER）</translation>
    </message>
    <message>
        <source>no Vulkan driver: vkEnumeratePhysicalDevices failed with %1</source>
        <translation>没有 Vulkan 驱动：vkEnumeratePhysicalDevices 失败，驱动返回 %1</translation>
    </message>
    <message>
        <source>no Vulkan device: the loader found no driver with a device (see VK_DRIVER_FILES / VK_ICD_FILENAMES and /usr/share/vulkan/icd.d)</source>
        <translation>没有 Vulkan 设备：加载器没有找到带设备的驱动（请检查 VK_DRIVER_FILES / VK_ICD_FILENAMES 和 /usr/share/vulkan/icd.d）</translation>
    </message>
    <message>
        <source>no Vulkan device</source>
        <translation>没有 Vulkan 设备</translation>
    </message>
    <message>
        <source>Vulkan device &quot;%1&quot;: no device with that index (devices: %2)</source>
        <translation>Vulkan 设备“%1”：没有这个编号的设备（现有设备：%2）</translation>
    </message>
    <message>
        <source>Vulkan device &quot;%1&quot;: no device name contains it (devices: %2)</source>
        <translation>Vulkan 设备“%1”：没有名称包含它的设备（现有设备：%2）</translation>
    </message>
    <message>
        <source>%1: %2 (%3)</source>
        <translation>Vulkan 调用 %1 失败，驱动返回 %2（%3）</translation>
    </message>
    <message>
        <source>the GPU did not finish within %1 s (VK_TIMEOUT)</source>
        <translation>GPU 在 %1 秒内没有完成计算（VK_TIMEOUT）</translation>
    </message>
    <message>
        <source>the device stopped answering: %1</source>
        <translation>设备停止响应：%1</translation>
    </message>
    <message>
        <source>the previous submission never finished</source>
        <translation>上一次提交一直没有完成</translation>
    </message>
    <message>
        <source>the device was lost earlier (%1); create a new backend</source>
        <translation>设备此前已丢失（%1）；请创建新的后端</translation>
    </message>
    <message>
        <source>%1: needs %2 in one allocation, more than the %3 that %4 allows</source>
        <translation>%1：单次分配需要 %2，超过 %4 允许的 %3</translation>
    </message>
    <message>
        <source>%1: needs %2 in one binding, more than the device&apos;s maxStorageBufferRange of %3</source>
        <translation>%1：单个绑定需要 %2，超过设备的 maxStorageBufferRange（%3）</translation>
    </message>
    <message>
        <source>%1: the device&apos;s maxStorageBufferRange is too small</source>
        <translation>%1：设备的 maxStorageBufferRange 太小</translation>
    </message>
    <message>
        <source>%1: the device allows no workgroups along an axis</source>
        <translation>%1：设备在某一轴向上不允许任何工作组</translation>
    </message>
    <message>
        <source>Vulkan device index %1 is out of range</source>
        <translation>Vulkan 设备编号 %1 超出范围</translation>
    </message>
    <message>
        <source>Vulkan device %1 has no compute queue</source>
        <translation>Vulkan 设备 %1 没有计算队列</translation>
    </message>
    <message>
        <source>Vulkan device %1 has no memory type with the properties needed</source>
        <translation>Vulkan 设备 %1 没有具备所需属性的内存类型</translation>
    </message>
    <message>
        <source>Vulkan validation was asked for, but %1 is not installed (Debian: apt install vulkan-validationlayers)</source>
        <translation>已请求 Vulkan 验证，但未安装 %1（Debian：apt install vulkan-validationlayers）</translation>
    </message>
    <message>
        <source>Vulkan validation: VK_EXT_debug_utils is unavailable</source>
        <translation>Vulkan 验证：VK_EXT_debug_utils 不可用</translation>
    </message>
    <message>
        <source>rollout: needs %1 of memory (four %2 x %2 matrices of doubles); this machine allows %3</source>
        <translation>注意力展开：需要 %1 内存（四个 %2 × %2 的双精度矩阵）；本机允许 %3</translation>
    </message>
    <message>
        <source>rollout: multiplying the %2 x %2 matrices of %1 layers needs about %3 operations, more than the %4 allowed (minutes of work)</source>
        <translation>注意力展开：将 %1 层的 %2 × %2 矩阵相乘约需 %3 次运算，超过允许的 %4 次（需要数分钟）</translation>
    </message>
    <message>
        <source>line %1, number %2: &quot;%3&quot; is not a number</source>
        <translation>第 %1 行第 %2 个数：“%3”不是数字</translation>
    </message>
    <message>
        <source>line %1 has %2 numbers, line 1 has %3</source>
        <translation>第 %1 行有 %2 个数，第 1 行有 %3 个</translation>
    </message>
    <message>
        <source>line %1 has 1 number, line 1 has %2</source>
        <translation>第 %1 行有 1 个数，第 1 行有 %2 个</translation>
    </message>
    <message>
        <source>no numbers</source>
        <translation>没有数字</translation>
    </message>
    <message>
        <source>more than %1 numbers: too many to paste</source>
        <translation>超过 %1 个数：太多，无法粘贴</translation>
    </message>
    <message>
        <source>line %1, number %2: %3 is beyond float32 (±3.4e38)</source>
        <translation>第 %1 行第 %2 个数：%3 超出 float32 范围（±3.4e38）</translation>
    </message>
    <message>
        <source>kvHeads: expected a whole number that divides heads (%1), found %2</source>
        <translation>kvHeads：应为能整除头数（%1）的整数，实际为 %2</translation>
    </message>
    <message>
        <source>rope: needs an even headDimQK (dimension i turns with dimension i + dK/2), found %1</source>
        <translation>rope：需要偶数的 headDimQK（第 i 维与第 i + dK/2 维一起旋转），实际为 %1</translation>
    </message>
    <message>
        <source>rope.base: expected a number above 0, found %1</source>
        <translation>rope.base：应为大于 0 的数，实际为 %1</translation>
    </message>
    <message>
        <source>%1: expected %2 positions (one per row), found %3</source>
        <translation>%1：应有 %2 个位置（每行一个），实际为 %3 个</translation>
    </message>
    <message>
        <source>%1: expected a whole number of 0 or more, found %2</source>
        <translation>%1：应为 0 或更大的整数，实际为 %2</translation>
    </message>
    <message>
        <source>mask.window: expected a whole number of at least 1, found %1</source>
        <translation>mask.window：应为至少为 1 的整数，实际为 %1</translation>
    </message>
    <message>
        <source>softcap: expected a number above 0, found %1</source>
        <translation>softcap：应为大于 0 的数，实际为 %1</translation>
    </message>
    <message>
        <source>rope.frequencies: expected %1 values (one per pair of dimensions), found %2</source>
        <translation>rope.frequencies：应有 %1 个值（每对维度一个），实际为 %2</translation>
    </message>
    <message>
        <source>rope.frequencies[%1]: expected a number of at least 0, found %2</source>
        <translation>rope.frequencies[%1]：应为不小于 0 的数，实际为 %2</translation>
    </message>
    <message>
        <source>rope.scaling: expected a number above 0, found %1</source>
        <translation>rope.scaling：应为大于 0 的数，实际为 %1</translation>
    </message>
    <message>
        <source>qkNormEps: expected a number above 0 and at most 1, found %1</source>
        <translation>qkNormEps：应为大于 0 且不超过 1 的数，实际为 %1</translation>
    </message>
    <message>
        <source>cannot compare: %1 has no attention maps</source>
        <translation>无法比较：%1 没有注意力图</translation>
    </message>
    <message>
        <source>cannot compare: A has %1 layers of %2 heads, B has %3 layers of %4 heads</source>
        <translation>无法比较：A 有 %1 层、每层 %2 个头，B 有 %3 层、每层 %4 个头</translation>
    </message>
    <message>
        <source>cannot compare: A has %1 samples and B has %2; the two inputs must hold as many sequences to be aligned</source>
        <translation>无法比较：A 有 %1 个样本而 B 有 %2 个；两个输入须含同样多的序列才能对齐</translation>
    </message>
    <message>
        <source>cannot compare: A has %1 tokens and B has %2; the two texts must tokenise to the same number of tokens to be aligned position by position</source>
        <translation>无法比较：A 有 %1 个词元而 B 有 %2 个；两段文本须切分出同样多的词元才能逐位置对齐</translation>
    </message>
    <message>
        <source>cannot compare: A has %1 tokens and B has %2; the two texts must tokenise to the same number of tokens to be aligned position by position; %3 is %4 followed by %5 more tokens</source>
        <translation>无法比较：A 有 %1 个词元而 B 有 %2 个；两段文本须切分出同样多的词元才能逐位置对齐；%3 是 %4 之后再加 %5 个词元</translation>
    </message>
    <message>
        <source>cannot compare: A has %1 tokens and B has %2; the two texts must tokenise to the same number of tokens to be aligned position by position; %3 is %4 followed by %5 more token</source>
        <translation>无法比较：A 有 %1 个词元而 B 有 %2 个；两段文本须切分出同样多的词元才能逐位置对齐；%3 是 %4 之后再加 %5 个词元</translation>
    </message>
    <message>
        <source>cannot compare: A has %1 queries and B has %2; the two inputs must have as many queries to be aligned position by position</source>
        <translation>无法比较：A 有 %1 个查询而 B 有 %2 个；两个输入须有同样多的查询才能逐位置对齐</translation>
    </message>
    <message>
        <source>cannot compare: A has %1 keys and B has %2; the two inputs must have as many keys to be aligned position by position</source>
        <translation>无法比较：A 有 %1 个键而 B 有 %2 个；两个输入须有同样多的键才能逐位置对齐</translation>
    </message>
    <message>
        <source>cannot compare: %1 is computed from queries and keys, whose maps would need %2 held as float32; export its weights to an attention file and compare that</source>
        <translation>无法比较：%1 由查询和键计算得出，其注意力图以 float32 存放需要 %2；请先把它的权重导出为注意力文件再比较</translation>
    </message>
    <message>
        <source>cannot compare: A, B and their difference need %1 (three times %2 maps of %3 x %4 float32 values); this machine allows %5</source>
        <translation>无法比较：A、B 及其差需要 %1（三份 %2 张 %3 × %4 的 float32 图）；本机允许 %5</translation>
    </message>
</context>
<context>
    <name>attnscope::CoreErrorTerm</name>
    <message>
        <source>a whole number of at least 1</source>
        <translation>不小于 1 的整数</translation>
    </message>
    <message>
        <source>a number</source>
        <translation>一个数</translation>
    </message>
    <message>
        <source>a finite number</source>
        <translation>有限数</translation>
    </message>
    <message>
        <source>a matrix</source>
        <translation>矩阵</translation>
    </message>
    <message>
        <source>a matrix (an array of rows of numbers)</source>
        <translation>矩阵（由数值行组成的数组）</translation>
    </message>
    <message>
        <source>a matrix (an array of rows of numbers) or {&quot;npy&quot;: &quot;file.npy&quot;}</source>
        <translation>矩阵（由数值行组成的数组）或 {&quot;npy&quot;: &quot;file.npy&quot;}</translation>
    </message>
    <message>
        <source>a row (an array of numbers)</source>
        <translation>一行（数值数组）</translation>
    </message>
    <message>
        <source>{&quot;npy&quot;: &quot;relative/path.npy&quot;} with nothing else</source>
        <translation>只含 {&quot;npy&quot;: &quot;relative/path.npy&quot;} 的对象</translation>
    </message>
    <message>
        <source>an array of numbers</source>
        <translation>数值数组</translation>
    </message>
    <message>
        <source>an array of strings</source>
        <translation>字符串数组</translation>
    </message>
    <message>
        <source>a string</source>
        <translation>字符串</translation>
    </message>
    <message>
        <source>an object</source>
        <translation>对象</translation>
    </message>
    <message>
        <source>an object with &quot;tokens&quot; and &quot;x&quot;</source>
        <translation>含 &quot;tokens&quot; 和 &quot;x&quot; 的对象</translation>
    </message>
    <message>
        <source>an object with q, k, v and o</source>
        <translation>含 q、k、v 和 o 的对象</translation>
    </message>
    <message>
        <source>true or false</source>
        <translation>true 或 false</translation>
    </message>
    <message>
        <source>an array of true/false (true = real token)</source>
        <translation>true/false 数组（true 表示真实词元）</translation>
    </message>
    <message>
        <source>a JSON object with &quot;format&quot;: &quot;attnscope&quot;</source>
        <translation>含 &quot;format&quot;: &quot;attnscope&quot; 的 JSON 对象</translation>
    </message>
    <message>
        <source>one label per row of the matrix x</source>
        <translation>矩阵 x 的每行一个标签</translation>
    </message>
    <message>
        <source>a matrix with one row per token</source>
        <translation>每个词元一行的矩阵</translation>
    </message>
    <message>
        <source>an array</source>
        <translation>数组</translation>
    </message>
    <message>
        <source>nothing</source>
        <translation>空</translation>
    </message>
    <message>
        <source>query tokens x key tokens</source>
        <translation>查询词元数 x 键词元数</translation>
    </message>
    <message>
        <source>its inputs and intermediate tensors</source>
        <translation>输入和中间张量</translation>
    </message>
    <message>
        <source>the attention values as float32</source>
        <translation>float32 注意力值</translation>
    </message>
    <message>
        <source>the CSV text</source>
        <translation>CSV 文本</translation>
    </message>
    <message>
        <source>the pooled computation</source>
        <translation>池化计算</translation>
    </message>
    <message>
        <source>the string %1</source>
        <translation>字符串 %1</translation>
    </message>
    <message>
        <source>the number %1</source>
        <translation>数值 %1</translation>
    </message>
</context>
<context>
    <name>attnscope::Document</name>
    <message>
        <source>Untitled</source>
        <translation>未命名</translation>
    </message>
    <message>
        <source>%1: out of memory while making the change. Nothing was changed.</source>
        <translation>%1：进行更改时内存不足。未做任何更改。</translation>
    </message>
    <message>
        <source>%1[%2, %3]: expected a finite number within float32 range (±3.4e38)</source>
        <translation>%1[%2, %3]：应为 float32 范围内的有限数（±3.4e38）</translation>
    </message>
    <message>
        <source>Edit %1[%2, %3]</source>
        <translation>编辑 %1[%2, %3]</translation>
    </message>
    <message>
        <source>Rename token &quot;%1&quot; to &quot;%2&quot;</source>
        <translation>将词元“%1”重命名为“%2”</translation>
    </message>
    <message>
        <source>Insert token &quot;%1&quot;</source>
        <translation>插入词元“%1”</translation>
    </message>
    <message>
        <source>Remove token &quot;%1&quot;</source>
        <translation>删除词元“%1”</translation>
    </message>
    <message>
        <source>Set heads to %1</source>
        <translation>将头数设为 %1</translation>
    </message>
    <message>
        <source>Set dK to %1</source>
        <translation>将 dK 设为 %1</translation>
    </message>
    <message>
        <source>Set dV to %1</source>
        <translation>将 dV 设为 %1</translation>
    </message>
    <message>
        <source>Set d_kv to %1</source>
        <translation>将 d_kv 设为 %1</translation>
    </message>
    <message>
        <source>Set d_model to %1</source>
        <translation>将 d_model 设为 %1</translation>
    </message>
    <message>
        <source>Set d_out to %1</source>
        <translation>将 d_out 设为 %1</translation>
    </message>
    <message>
        <source>Switch to cross-attention</source>
        <translation>切换为交叉注意力</translation>
    </message>
    <message>
        <source>Switch to self-attention</source>
        <translation>切换为自注意力</translation>
    </message>
    <message>
        <source>Change scale</source>
        <translation>更改缩放因子</translation>
    </message>
    <message>
        <source>Change scale mode</source>
        <translation>更改缩放方式</translation>
    </message>
    <message>
        <source>Change mask fill</source>
        <translation>更改掩码填充值</translation>
    </message>
    <message>
        <source>Re-initialise %1</source>
        <translation>重新初始化 %1</translation>
    </message>
    <message>
        <source>Add %1</source>
        <translation>添加 %1</translation>
    </message>
    <message>
        <source>Remove %1</source>
        <translation>移除 %1</translation>
    </message>
    <message>
        <source>Allow mask cells</source>
        <translation>允许掩码单元格</translation>
    </message>
    <message>
        <source>Mask cells</source>
        <translation>屏蔽掩码单元格</translation>
    </message>
    <message>
        <source>No mask</source>
        <translation>无掩码</translation>
    </message>
    <message>
        <source>Causal mask</source>
        <translation>因果掩码</translation>
    </message>
    <message>
        <source>Padding mask from tokens</source>
        <translation>由词元生成填充掩码</translation>
    </message>
    <message>
        <source>Sliding-window mask</source>
        <translation>滑动窗口掩码</translation>
    </message>
    <message>
        <source>Change title</source>
        <translation>更改标题</translation>
    </message>
    <message>
        <source>%1: the change would need about %2 of memory (%3 for the project and its undo copies, %4 for its intermediate tensors); this machine allows %5. Nothing was changed.</source>
        <translation>%1：此更改需要约 %2 内存（项目及其撤销副本 %3，中间张量 %4）；本机允许 %5。未做任何更改。</translation>
    </message>
    <message>
        <source>The pasted block is %1 × %2; %3 from [%4, %5] has room for %6 × %7.</source>
        <translation>粘贴的块为 %1 × %2；%3 从 [%4, %5] 起只容得下 %6 × %7。</translation>
    </message>
    <message>
        <source>Paste into %1</source>
        <translation>粘贴到 %1</translation>
    </message>
    <message>
        <source>Paste into %1: %2</source>
        <translation>粘贴到 %1：%2</translation>
    </message>
    <message>
        <source>Set key/value heads to %1</source>
        <translation>将键值头设为 %1</translation>
    </message>
    <message>
        <source>Turn RoPE on</source>
        <translation>开启 RoPE</translation>
    </message>
    <message>
        <source>Turn RoPE off</source>
        <translation>关闭 RoPE</translation>
    </message>
    <message>
        <source>Change RoPE base</source>
        <translation>更改 RoPE 基数</translation>
    </message>
    <message>
        <source>Set key positions</source>
        <translation>设置键位置</translation>
    </message>
    <message>
        <source>Set query positions</source>
        <translation>设置查询位置</translation>
    </message>
    <message>
        <source>Change soft-cap</source>
        <translation>更改软上限</translation>
    </message>
    <message>
        <source>Turn soft-cap on</source>
        <translation>开启软上限</translation>
    </message>
    <message>
        <source>Turn soft-cap off</source>
        <translation>关闭软上限</translation>
    </message>
    <message>
        <source>Change sliding window</source>
        <translation>更改滑动窗口</translation>
    </message>
</context>
<context>
    <name>attnscope::Examples</name>
    <message>
        <source>Could not copy the example to %1: %2</source>
        <translation>无法将示例复制到 %1：%2</translation>
    </message>
</context>
<context>
    <name>attnscope::ExportDataDialog</name>
    <message>
        <source>%1: the file name must end in .csv, .npy, .npz or .json.</source>
        <translation>%1：文件名必须以 .csv、.npy、.npz 或 .json 结尾。</translation>
    </message>
    <message>
        <source>Export Data</source>
        <translation>导出数据</translation>
    </message>
    <message>
        <source>weights.csv, .npy, or all tensors: .npz, .json</source>
        <translation>weights.csv、.npy，或全部张量：.npz、.json</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>CSV, one head (*.csv);;NumPy array (*.npy);;All tensors, NumPy (*.npz);;All tensors, JSON (*.json)</source>
        <translation>CSV，单个头 (*.csv);;NumPy 数组 (*.npy);;全部张量，NumPy (*.npz);;全部张量，JSON (*.json)</translation>
    </message>
    <message>
        <source>Tensor:</source>
        <translation>张量：</translation>
    </message>
    <message>
        <source>Head (CSV):</source>
        <translation>头（CSV）：</translation>
    </message>
    <message>
        <source>File:</source>
        <translation>文件：</translation>
    </message>
    <message>
        <source>The suffix picks the format: .csv and .npy write the tensor chosen, .npz and .json every tensor.</source>
        <translation>文件后缀决定格式：.csv 和 .npy 写入所选张量，.npz 和 .json 写入全部张量。</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Nothing to export yet: the project is still being computed.</source>
        <translation>暂无可导出的内容：项目仍在计算中。</translation>
    </message>
    <message>
        <source>Choose a file name ending in .csv, .npy, .npz or .json.</source>
        <translation>请选择以 .csv、.npy、.npz 或 .json 结尾的文件名。</translation>
    </message>
    <message>
        <source>%1: the data could not be written.</source>
        <translation>%1：无法写入数据。</translation>
    </message>
    <message>
        <source>weights.npy, or one matrix or the statistics: .csv</source>
        <translation>weights.npy，或单个矩阵、统计量：.csv</translation>
    </message>
    <message>
        <source>NumPy array (*.npy);;CSV (*.csv);;JSON, statistics (*.json)</source>
        <translation>NumPy 数组 (*.npy);;CSV (*.csv);;JSON，统计量 (*.json)</translation>
    </message>
    <message>
        <source>Data:</source>
        <translation>数据：</translation>
    </message>
    <message>
        <source>Layer:</source>
        <translation>层：</translation>
    </message>
    <message>
        <source>Head:</source>
        <translation>头：</translation>
    </message>
    <message>
        <source>Weights of every layer %1</source>
        <translation>所有层的权重 %1</translation>
    </message>
    <message>
        <source>Weights of one layer %1</source>
        <translation>某一层的权重 %1</translation>
    </message>
    <message>
        <source>Weights of one head %1</source>
        <translation>某一个头的权重 %1</translation>
    </message>
    <message>
        <source>Mean over the heads of one layer %1</source>
        <translation>某一层各头的平均 %1</translation>
    </message>
    <message>
        <source>Rollout over every layer %1</source>
        <translation>所有层的注意力展开（rollout）%1</translation>
    </message>
    <message>
        <source>Statistics of every head (%1 rows)</source>
        <translation>每个头的统计量（%1 行）</translation>
    </message>
    <message>
        <source>Layer %1: %2</source>
        <translation>第 %1 层：%2</translation>
    </message>
    <message>
        <source>The suffix picks the format: .csv and .npy write the tensor chosen, .npz and .json every tensor of layer %1.</source>
        <translation>文件后缀决定格式：.csv 和 .npy 写入所选张量，.npz 和 .json 写入第 %1 层的全部张量。</translation>
    </message>
    <message>
        <source>Written as: %1.</source>
        <translation>写出格式：%1。</translation>
    </message>
    <message>
        <source>, .</source>
        <translation>、.</translation>
    </message>
    <message>
        <source>%1: %2 is written as %3.</source>
        <translation>%1：“%2”只能写成 %3。</translation>
    </message>
    <message>
        <source> or .</source>
        <translation> 或 .</translation>
    </message>
    <message>
        <source>Choose a file name ending in .%1.</source>
        <translation>请选择以 .%1 结尾的文件名。</translation>
    </message>
    <message>
        <source>%1 is the attention file shown; choose another name.</source>
        <translation>%1 是正在显示的注意力文件；请另选一个文件名。</translation>
    </message>
</context>
<context>
    <name>attnscope::ExportFigureDialog</name>
    <message>
        <source>Export Figure</source>
        <translation>导出图像</translation>
    </message>
    <message>
        <source>Weights (softmax)</source>
        <translation>权重（softmax）</translation>
    </message>
    <message>
        <source>Scores (scaled, before mask)</source>
        <translation>分数（已缩放，掩码前）</translation>
    </message>
    <message>
        <source>Absolute (0..1)</source>
        <translation>绝对（0..1）</translation>
    </message>
    <message>
        <source>Shared by all heads</source>
        <translation>所有头共用</translation>
    </message>
    <message>
        <source>Per head</source>
        <translation>每个头单独</translation>
    </message>
    <message>
        <source>Colour bar / legend</source>
        <translation>色标/图例</translation>
    </message>
    <message>
        <source>Token labels</source>
        <translation>词元标签</translation>
    </message>
    <message>
        <source>Values in cells</source>
        <translation>单元格中的数值</translation>
    </message>
    <message>
        <source>Axis titles (query, key)</source>
        <translation>坐标轴标题（查询、键）</translation>
    </message>
    <message>
        <source>All heads in the head view</source>
        <translation>头视图中显示所有头</translation>
    </message>
    <message>
        <source>Title</source>
        <translation>标题</translation>
    </message>
    <message>
        <source>Default title</source>
        <translation>默认标题</translation>
    </message>
    <message>
        <source> pt</source>
        <translation> pt</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source> px</source>
        <translation> px</translation>
    </message>
    <message>
        <source>White</source>
        <translation>白色</translation>
    </message>
    <message>
        <source>Transparent</source>
        <translation>透明</translation>
    </message>
    <message>
        <source>figure.png, .svg or .pdf</source>
        <translation>figure.png、.svg 或 .pdf</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>View:</source>
        <translation>视图：</translation>
    </message>
    <message>
        <source>Head:</source>
        <translation>头：</translation>
    </message>
    <message>
        <source>Show:</source>
        <translation>显示：</translation>
    </message>
    <message>
        <source>Colour map:</source>
        <translation>色图：</translation>
    </message>
    <message>
        <source>Scale:</source>
        <translation>色阶：</translation>
    </message>
    <message>
        <source>Font size:</source>
        <translation>字号：</translation>
    </message>
    <message>
        <source>DPI:</source>
        <translation>DPI：</translation>
    </message>
    <message>
        <source>Size:</source>
        <translation>尺寸：</translation>
    </message>
    <message>
        <source>Background:</source>
        <translation>背景：</translation>
    </message>
    <message>
        <source>File:</source>
        <translation>文件：</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>%1 × %2 px at %3 DPI (%4 × %5 cm)</source>
        <translation>%1 × %2 像素，%3 DPI（%4 × %5 厘米）</translation>
    </message>
    <message>
        <source>PNG image (*.png);;SVG vector image (*.svg);;PDF document (*.pdf)</source>
        <translation>PNG 图像 (*.png);;SVG 矢量图 (*.svg);;PDF 文档 (*.pdf)</translation>
    </message>
    <message>
        <source>Nothing to export yet: the project is still being computed.</source>
        <translation>暂无可导出的内容：项目仍在计算中。</translation>
    </message>
    <message>
        <source>Choose a file name ending in .png, .svg or .pdf.</source>
        <translation>请选择以 .png、.svg 或 .pdf 结尾的文件名。</translation>
    </message>
    <message>
        <source>%1: the file name must end in .png, .svg or .pdf.</source>
        <translation>%1：文件名必须以 .png、.svg 或 .pdf 结尾。</translation>
    </message>
    <message>
        <source>%1: the figure could not be written.</source>
        <translation>%1：无法写入图像。</translation>
    </message>
    <message>
        <source>Colour scale:</source>
        <translation>颜色刻度：</translation>
    </message>
</context>
<context>
    <name>attnscope::FigureActions</name>
    <message>
        <source>Export &amp;Figure…</source>
        <translation>导出图像(&amp;F)…</translation>
    </message>
    <message>
        <source>Export &amp;Data…</source>
        <translation>导出数据(&amp;D)…</translation>
    </message>
    <message>
        <source>Copy &amp;Figure</source>
        <translation>复制图像(&amp;F)</translation>
    </message>
    <message>
        <source>Copy the view shown as an image</source>
        <translation>将当前视图复制为图像</translation>
    </message>
    <message>
        <source>Nothing to export yet: the pooled view is still being computed.</source>
        <translation>暂无可导出的内容：池化视图仍在计算中。</translation>
    </message>
    <message>
        <source>Nothing to export yet: the project is still being computed.</source>
        <translation>暂无可导出的内容：项目仍在计算中。</translation>
    </message>
    <message>
        <source>Exported %1</source>
        <translation>已导出 %1</translation>
    </message>
    <message>
        <source>Export Data writes the full tensors, and this attention is too long to hold them; it is shown pooled. To write pooled weights, row entropies and the output, use attnscope-cli compute PROJECT --out DIR --pool N.</source>
        <translation>“导出数据”写出完整张量，而此注意力过长，无法完整保存，因此以池化方式显示。如需写出池化权重、行熵和输出，请使用 attnscope-cli compute PROJECT --out DIR --pool N。</translation>
    </message>
    <message>
        <source>Figure copied (%1 × %2 px)</source>
        <translation>图像已复制（%1 × %2 像素）</translation>
    </message>
</context>
<context>
    <name>attnscope::FileSource</name>
    <message>
        <source>Reading %1…</source>
        <translation>正在读取 %1…</translation>
    </message>
    <message>
        <source>Attention file: %1, %2</source>
        <translation>注意力文件：%1，%2</translation>
    </message>
    <message>
        <source>The views show the file as it was read: it changed on disk since.</source>
        <translation>视图显示的是读取时的文件：此后它已在磁盘上被修改。</translation>
    </message>
    <message>
        <source>Reopen</source>
        <translation>重新打开</translation>
    </message>
    <message>
        <source>Read the file again as it is on disk now.</source>
        <translation>按磁盘上现在的内容重新读取该文件。</translation>
    </message>
    <message>
        <source>Applying softmax to the rows of %1…</source>
        <translation>正在对 %1 的每一行应用 softmax…</translation>
    </message>
    <message>
        <source>Row sums %1 to %2</source>
        <translation>行和为 %1 到 %2</translation>
    </message>
    <message>
        <source>Softmax applied to every row of the file (its %1).</source>
        <translation>已对文件的每一行应用 softmax（原文件%1）。</translation>
    </message>
    <message>
        <source>%1 of %2 rows sum above 1</source>
        <translation>%2 行中有 %1 行之和大于 1</translation>
    </message>
    <message>
        <source>%1 rows have negative values (down to %2)</source>
        <translation>%1 行含有负值（最小为 %2）</translation>
    </message>
    <message>
        <source>%1: %2. These look like scores before softmax; entropy, confidence and rollout mean nothing on them.</source>
        <translation>%1：%2。这些看起来是 softmax 之前的分数；对它们计算熵、置信度和注意力展开没有意义。</translation>
    </message>
    <message>
        <source>; </source>
        <translation>；</translation>
    </message>
    <message>
        <source>Not attention weights: %1</source>
        <translation>不是注意力权重：%1</translation>
    </message>
    <message>
        <source>This file does not hold attention weights: its rows are not softmax rows.</source>
        <translation>此文件中不是注意力权重：它的各行不是 softmax 的结果。</translation>
    </message>
    <message>
        <source>Apply Softmax</source>
        <translation>应用 Softmax</translation>
    </message>
    <message>
        <source>Show softmax over each row of the file (the file itself is not changed).</source>
        <translation>显示对文件每一行做 softmax 的结果（文件本身不会被修改）。</translation>
    </message>
    <message>
        <source>%1 of %2 rows are all zero (masked queries)</source>
        <translation>%2 行中有 %1 行全为零（被掩码的查询）</translation>
    </message>
    <message>
        <source>%1 of %2 rows sum below 1 (weight kept out of the map, as by a sink)</source>
        <translation>%2 行中有 %1 行之和小于 1（部分权重不在图中，例如被汇聚词元（sink）占去）</translation>
    </message>
    <message>
        <source>%1: %2.</source>
        <translation>%1：%2。</translation>
    </message>
    <message>
        <source>%1, softmax applied</source>
        <translation>%1，已应用 softmax</translation>
    </message>
    <message>
        <source>Q/K dump: maps computed from queries and keys (%1)</source>
        <translation>Q/K 转储：由查询和键计算出的注意力图（%1）</translation>
    </message>
</context>
<context>
    <name>attnscope::GenerationController</name>
    <message>
        <source>Generating up to %1 tokens keeps every head&apos;s map: %2 MiB, more than half of the %3 MiB this window allows. Ask for fewer new tokens or a shorter prompt.</source>
        <translation>生成至多 %1 个词元要保留每个头的注意力图：%2 MiB，超过本窗口允许的 %3 MiB 的一半。请减少新词元数或缩短提示。</translation>
    </message>
    <message>
        <source>Memory ran out generating.</source>
        <translation>生成时内存不足。</translation>
    </message>
</context>
<context>
    <name>attnscope::GenerationPanel</name>
    <message>
        <source>&amp;Generate</source>
        <translation>生成(&amp;G)</translation>
    </message>
    <message>
        <source>S&amp;tep</source>
        <translation>单步(&amp;T)</translation>
    </message>
    <message>
        <source>Sto&amp;p</source>
        <translation>停止(&amp;P)</translation>
    </message>
    <message>
        <source>Back to the Text</source>
        <translation>回到输入文本</translation>
    </message>
    <message>
        <source>Model&apos;s Defaults</source>
        <translation>模型默认值</translation>
    </message>
    <message>
        <source>&amp;Force This Token</source>
        <translation>强制选用此词元(&amp;F)</translation>
    </message>
    <message>
        <source>Save Generation…</source>
        <translation>保存生成结果…</translation>
    </message>
    <message>
        <source>Continue the text the model reads, token by token, up to the most new tokens.</source>
        <translation>逐个词元续写模型读入的文本，直到最多新词元数。</translation>
    </message>
    <message>
        <source>Generate one more token: its row appears in every head.</source>
        <translation>再生成一个词元：它的那一行出现在每个头中。</translation>
    </message>
    <message>
        <source>Stop generating; the tokens so far stay.</source>
        <translation>停止生成；已生成的词元保留。</translation>
    </message>
    <message>
        <source>Show the typed text again, without the generated tokens.</source>
        <translation>重新显示输入的文本，不含生成的词元。</translation>
    </message>
    <message>
        <source>The most tokens one Generate adds.</source>
        <translation>一次“生成”最多添加的词元数。</translation>
    </message>
    <message>
        <source>0 (greedy)</source>
        <translation>0（贪心）</translation>
    </message>
    <message>
        <source>0 takes the most probable token; above 0 the logits are divided by it and a token is drawn.</source>
        <translation>为 0 时取概率最大的词元；大于 0 时 logits 除以它，再抽取一个词元。</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关</translation>
    </message>
    <message>
        <source>Draw only from the k most probable tokens (0: all).</source>
        <translation>只从概率最大的 k 个词元中抽取（0：全部）。</translation>
    </message>
    <message>
        <source>Draw only from the most probable tokens whose probabilities add up to p (1: all).</source>
        <translation>只从概率之和达到 p 的最可能词元中抽取（1：全部）。</translation>
    </message>
    <message>
        <source>The same seed draws the same tokens again.</source>
        <translation>相同的种子会再次抽出相同的词元。</translation>
    </message>
    <message>
        <source>The decoding the model&apos;s generation_config.json asks for.</source>
        <translation>模型的 generation_config.json 所要求的解码方式。</translation>
    </message>
    <message>
        <source>Most new tokens:</source>
        <translation>最多新词元数：</translation>
    </message>
    <message>
        <source>Temperature:</source>
        <translation>温度：</translation>
    </message>
    <message>
        <source>Top-k:</source>
        <translation>Top-k：</translation>
    </message>
    <message>
        <source>Top-p:</source>
        <translation>Top-p：</translation>
    </message>
    <message>
        <source>Seed:</source>
        <translation>种子：</translation>
    </message>
    <message>
        <source>Each generated token with its probability; pick one to see what it was chosen from.</source>
        <translation>每个生成的词元及其概率；选中一个，查看它是从哪些候选中选出的。</translation>
    </message>
    <message>
        <source>Take the candidate picked in the chart at this step instead, and continue from it.</source>
        <translation>在这一步改用图中选中的候选，并从它继续生成。</translation>
    </message>
    <message>
        <source>Write tokens.json (every step with its candidates) and the attentions of the sequence into a folder.</source>
        <translation>把 tokens.json（每一步及其候选）和整个序列的注意力写入一个文件夹。</translation>
    </message>
    <message>
        <source>Generated:</source>
        <translation>已生成：</translation>
    </message>
    <message>
        <source>%1. %2  %3</source>
        <translation>%1. %2  %3</translation>
    </message>
    <message>
        <source>(forced)</source>
        <translation>（强制）</translation>
    </message>
    <message>
        <source>stopped at the end-of-sequence token</source>
        <translation>在序列结束词元处停止</translation>
    </message>
    <message>
        <source>the model has no more positions</source>
        <translation>模型已没有更多位置</translation>
    </message>
    <message>
        <source>Step %1 chose %2 (%3) from these candidates; pick another to force it.</source>
        <translation>第 %1 步从这些候选中选了 %2（%3）；选中另一个可强制改用它。</translation>
    </message>
</context>
<context>
    <name>attnscope::HeadStatsModel</name>
    <message>
        <source>Mean over query rows of the entropy of the row (natural log): low is focused.</source>
        <translation>各查询行注意力熵（自然对数）的平均值：越低越集中。</translation>
    </message>
    <message>
        <source>Mean over query rows of the weighted distance |query - key| in tokens.</source>
        <translation>各查询行按权重加权的距离 |查询 - 键|（以词元计）的平均值。</translation>
    </message>
    <message>
        <source>Mean over query rows of the largest weight.</source>
        <translation>各查询行最大权重的平均值。</translation>
    </message>
    <message>
        <source>Mean weight of a token on itself (square maps only).</source>
        <translation>词元对自身的平均权重（仅限方阵）。</translation>
    </message>
    <message>
        <source>Mean weight of a token on the token before it.</source>
        <translation>词元对前一个词元的平均权重。</translation>
    </message>
    <message>
        <source>Layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Head</source>
        <translation>头</translation>
    </message>
    <message>
        <source>Entropy</source>
        <translation>熵</translation>
    </message>
    <message>
        <source>Distance</source>
        <translation>距离</translation>
    </message>
    <message>
        <source>Confidence</source>
        <translation>置信度</translation>
    </message>
    <message>
        <source>Self</source>
        <translation>自身</translation>
    </message>
    <message>
        <source>Previous</source>
        <translation>前一个</translation>
    </message>
    <message>
        <source>Sink mass: the mean weight on the first key token.</source>
        <translation>汇聚质量：放在第一个键词元上的平均权重。</translation>
    </message>
    <message>
        <source>Mean over query rows of the weighted standard deviation of |query - key|: 0 when a head always looks the same distance back.</source>
        <translation>各查询行上 |查询 - 键| 的加权标准差的平均：如果一个头总是回看相同的距离，则为 0。</translation>
    </message>
    <message>
        <source>Induction score: the mean weight a repeated token puts on the token that followed its earlier occurrences. Empty when no token repeats; type a sentence twice.</source>
        <translation>归纳分数：重复出现的词元放在其先前出现位置之后那个词元上的平均权重。没有重复词元时为空；请把一句话输入两遍。</translation>
    </message>
    <message>
        <source>Distance to the chosen head over the standardised metrics (entropy, distance, spread, confidence, sink mass, self, previous, induction): 0 for the head itself, small for heads like it. Right-click a head: Find Heads Like This.</source>
        <translation>在标准化指标（熵、距离、离散度、置信度、汇聚质量、自身、前一个、归纳）上与所选头的距离：所选头自身为 0，相似的头较小。右键点击一个头：查找相似的头。</translation>
    </message>
    <message>
        <source>Sink mass</source>
        <translation>汇聚质量</translation>
    </message>
    <message>
        <source>Spread</source>
        <translation>离散度</translation>
    </message>
    <message>
        <source>Induction</source>
        <translation>归纳</translation>
    </message>
    <message>
        <source>Unlike L%1 H%2</source>
        <translation>与 L%1 H%2 的差异</translation>
    </message>
    <message>
        <source>Unlike</source>
        <translation>差异</translation>
    </message>
</context>
<context>
    <name>attnscope::HeadsGridView</name>
    <message>
        <source>Computing…</source>
        <translation>正在计算…</translation>
    </message>
    <message>
        <source>K/V head %1</source>
        <translation>键值头 %1</translation>
    </message>
</context>
<context>
    <name>attnscope::Heatmap</name>
    <message>
        <source>Mean over 1 head</source>
        <translation>1 个头的平均</translation>
    </message>
    <message numerus="yes">
        <source>Mean over %n heads</source>
        <translation>
            <numerusform>%n 个头的平均</numerusform>
        </translation>
    </message>
    <message>
        <source>Head %1</source>
        <translation>头 %1</translation>
    </message>
    <message>
        <source>query</source>
        <translation>查询</translation>
    </message>
    <message>
        <source>key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>NaN: not a number</source>
        <translation>NaN：非数值</translation>
    </message>
    <message>
        <source>±Inf: overflow</source>
        <translation>±Inf：溢出</translation>
    </message>
    <message>
        <source>Head %1 (K/V %2)</source>
        <translation>头 %1（键值 %2）</translation>
    </message>
</context>
<context>
    <name>attnscope::HeatmapView</name>
    <message>
        <source>%1 of head %2</source>
        <translation>头 %2 的 %1</translation>
    </message>
    <message>
        <source>Query %1 &quot;%2&quot; → key %3 &quot;%4&quot;</source>
        <translation>查询 %1“%2”→ 键 %3“%4”</translation>
    </message>
    <message>
        <source>mean weight over heads: %1</source>
        <translation>各头平均权重：%1</translation>
    </message>
    <message>
        <source>q·k = %1</source>
        <translation>q·k = %1</translation>
    </message>
    <message>
        <source>scaled score = %1 (× %2)</source>
        <translation>缩放后的分数 = %1（× %2）</translation>
    </message>
    <message>
        <source>weight = %1: not finite (the scores overflowed float32)</source>
        <translation>权重 = %1：非有限值（分数超出了 float32 范围）</translation>
    </message>
    <message>
        <source>weight = %1</source>
        <translation>权重 = %1</translation>
    </message>
    <message>
        <source>masked: weight = 0</source>
        <translation>已掩码：权重 = 0</translation>
    </message>
    <message>
        <source>masked, and this query has no allowed key: with the fill %1 the whole row has weight = 0 (PyTorch gives NaN)</source>
        <translation>已掩码，且该查询没有允许的键：填充值为 %1 时整行权重 = 0（PyTorch 会得到 NaN）</translation>
    </message>
    <message>
        <source>masked, but this query has no allowed key: every logit is the fill %1, so the weights are uniform, 1/%2 = %3</source>
        <translation>已掩码，但该查询没有允许的键：每个 logit 都是填充值 %1，所以权重均匀，1/%2 = %3</translation>
    </message>
    <message>
        <source>this query has no allowed key</source>
        <translation>该查询没有允许的键</translation>
    </message>
    <message>
        <source>No heads</source>
        <translation>没有注意力头</translation>
    </message>
    <message>
        <source>Computing…</source>
        <translation>正在计算…</translation>
    </message>
    <message>
        <source>The result is not finite: %1 NaN values (magenta cells) and %2 infinite values, +Inf or -Inf (cyan cells); the first in %3. The inputs are finite, so the arithmetic overflowed float32: make the inputs, weights or scale smaller.</source>
        <translation>结果不是有限值：%1 个 NaN 值（洋红色单元格）和 %2 个无穷大值，即 +Inf 或 -Inf（青色单元格）；第一个位于 %3。输入是有限的，所以是运算超出了 float32 范围：请减小输入、权重或缩放因子。</translation>
    </message>
    <message>
        <source>Values hidden: cells are smaller than %1 px. Zoom in with the wheel or enlarge the view to read them, or hover a cell for its numbers.</source>
        <translation>数值已隐藏：单元格小于 %1 像素。用滚轮放大或把视图调大即可读出数值，也可以把鼠标悬停在单元格上查看。</translation>
    </message>
    <message>
        <source>keys and values of key/value head %1 (shared by query heads %2–%3)</source>
        <translation>键和值来自键值头 %1（由查询头 %2–%3 共享）</translation>
    </message>
    <message>
        <source>RoPE: query at position %1, key at %2 (distance %3)</source>
        <translation>RoPE：查询位于 %1，键位于 %2（距离 %3）</translation>
    </message>
    <message>
        <source>scaled = %1 (× %2), soft-capped: %3·tanh(scaled/%3) = %4</source>
        <translation>缩放后 = %1（× %2），软上限：%3·tanh(缩放后/%3) = %4</translation>
    </message>
    <message>
        <source>masked (causal: the key comes after the query): weight = 0</source>
        <translation>已掩码（因果：键在查询之后）：权重 = 0</translation>
    </message>
    <message>
        <source>masked (the key is padding): weight = 0</source>
        <translation>已掩码（该键是填充）：权重 = 0</translation>
    </message>
    <message>
        <source>the sink (%1) takes %2 of this row</source>
        <translation>汇点（%1）占这一行的 %2</translation>
    </message>
    <message>
        <source>masked (outside the sliding window of 1 key): weight = 0</source>
        <translation>已掩码（在 1 个键的滑动窗口之外）：权重 = 0</translation>
    </message>
    <message>
        <source>masked (outside the sliding window of %1 keys): weight = 0</source>
        <translation>已掩码（在 %1 个键的滑动窗口之外）：权重 = 0</translation>
    </message>
    <message>
        <source>mean difference over heads (B − A): %1</source>
        <translation>各头平均差值（B − A）：%1</translation>
    </message>
    <message>
        <source>difference B − A = %1</source>
        <translation>差值 B − A = %1</translation>
    </message>
</context>
<context>
    <name>attnscope::Language</name>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>System default</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>The new language takes effect when AttnScope starts again.</source>
        <translation>新语言将在 AttnScope 下次启动时生效。</translation>
    </message>
</context>
<context>
    <name>attnscope::MainWindow</name>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;New</source>
        <translation>新建(&amp;N)</translation>
    </message>
    <message>
        <source>&amp;Open…</source>
        <translation>打开(&amp;O)…</translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Examples</source>
        <translation>示例(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation>编辑(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Undo</source>
        <translation>撤销(&amp;U)</translation>
    </message>
    <message>
        <source>&amp;Redo</source>
        <translation>重做(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <source>Open &amp;Model…</source>
        <translation>打开模型(&amp;M)…</translation>
    </message>
    <message>
        <source>Open This Head in the &amp;Editor</source>
        <translation>在编辑器中打开此注意力头(&amp;E)</translation>
    </message>
    <message>
        <source>%1 is not a folder.</source>
        <translation>%1 不是文件夹。</translation>
    </message>
    <message>
        <source>Example model: tiny GPT-2</source>
        <translation>示例模型：小型 GPT-2</translation>
    </message>
    <message>
        <source>The example model is not installed: no folder holds it (looked in %1).</source>
        <translation>示例模型未安装：没有文件夹包含它（查找过 %1）。</translation>
    </message>
    <message>
        <source>New &amp;Window</source>
        <translation>新建窗口(&amp;W)</translation>
    </message>
    <message>
        <source>Example model: tiny Qwen3 (Chinese and English)</source>
        <translation>示例模型：tiny Qwen3（中文和英文）</translation>
    </message>
    <message>
        <source>Open project, attention file or Q/K dump</source>
        <translation>打开项目、注意力文件或 Q/K 转储</translation>
    </message>
    <message>
        <source>Projects, attention files and Q/K dumps (*.attnscope.json *.json *.npy *.npz *.safetensors);;AttnScope projects (*.attnscope.json *.json);;Attention files (*.npy *.npz *.safetensors);;Q/K dumps (attnscope-qk.json);;All files (*)</source>
        <translation>项目、注意力文件和 Q/K 转储 (*.attnscope.json *.json *.npy *.npz *.safetensors);;AttnScope 项目 (*.attnscope.json *.json);;注意力文件 (*.npy *.npz *.safetensors);;Q/K 转储 (attnscope-qk.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>&amp;Compare…</source>
        <translation>比较(&amp;C)…</translation>
    </message>
    <message>
        <source>Two runs side by side and as their difference: two texts on one model, one text on two models of the same shape, or two attention files.</source>
        <translation>并排显示两次运行及其差值：同一模型上的两段文本、同形状的两个模型上的同一段文本，或两个注意力文件。</translation>
    </message>
    <message>
        <source>A</source>
        <translation>A</translation>
    </message>
    <message>
        <source>B</source>
        <translation>B</translation>
    </message>
    <message>
        <source>Example model: tiny translation, English to Chinese</source>
        <translation>示例模型：微型翻译，英译中</translation>
    </message>
</context>
<context>
    <name>attnscope::MaskEditor</name>
    <message>
        <source>None (clear all parts)</source>
        <translation>无（清除所有部分）</translation>
    </message>
    <message>
        <source>Causal</source>
        <translation>因果</translation>
    </message>
    <message>
        <source>Padding from tokens</source>
        <translation>由词元生成填充</translation>
    </message>
    <message>
        <source>Sliding window</source>
        <translation>滑动窗口</translation>
    </message>
    <message>
        <source>window </source>
        <translation>窗口 </translation>
    </message>
    <message>
        <source>Apply</source>
        <translation>应用</translation>
    </message>
    <message>
        <source>causal</source>
        <translation>因果</translation>
    </message>
    <message>
        <source>key padding</source>
        <translation>键填充</translation>
    </message>
    <message>
        <source>custom</source>
        <translation>自定义</translation>
    </message>
    <message>
        <source>Effective mask = AND of: %1.</source>
        <translation>有效掩码 = 以下各项的与：%1。</translation>
    </message>
    <message>
        <source>nothing (all allowed)</source>
        <translation>无（全部允许）</translation>
    </message>
    <message numerus="yes">
        <source>&lt;span style=&apos;color:#d62728&apos;&gt;%n query row(s) attend to no key: their weights are %1.&lt;/span&gt;</source>
        <translation>
            <numerusform>&lt;span style=&apos;color:#d62728&apos;&gt;%n 个查询行不关注任何键：它们的权重为%1。&lt;/span&gt;</numerusform>
        </translation>
    </message>
    <message>
        <source>all 0</source>
        <translation>全 0</translation>
    </message>
    <message>
        <source>uniform</source>
        <translation>均匀分布</translation>
    </message>
    <message>
        <source>no window</source>
        <translation>无窗口</translation>
    </message>
    <message>
        <source>Sliding window W: key j is allowed for query i only when i - W &lt; j (ANDed with the other parts; with causal: the last W keys up to i). 0: no window.</source>
        <translation>滑动窗口 W：只有当 i - W &lt; j 时，查询 i 才能关注键 j（与其他部分取与；加上因果掩码：截至 i 的最近 W 个键）。0：无窗口。</translation>
    </message>
    <message>
        <source>sliding window %1</source>
        <translation>滑动窗口 %1</translation>
    </message>
</context>
<context>
    <name>attnscope::MaskGrid</name>
    <message>
        <source>Click or drag to toggle cells of the custom mask.
Green: query may attend to key. Dark: masked.
Hatched: masked by the causal or padding part.</source>
        <translation>单击或拖动以切换自定义掩码的单元格。
绿色：查询可以关注该键。深色：已掩码。
斜线：被因果或填充部分掩码。</translation>
    </message>
</context>
<context>
    <name>attnscope::Matrix</name>
    <message>
        <source>X (query)</source>
        <translation>X（查询）</translation>
    </message>
    <message>
        <source>X (key/value)</source>
        <translation>X（键/值）</translation>
    </message>
    <message>
        <source>X (value)</source>
        <translation>X（值）</translation>
    </message>
    <message>
        <source>Sinks</source>
        <translation>汇点</translation>
    </message>
</context>
<context>
    <name>attnscope::MatrixEditor</name>
    <message>
        <source>Tq × d_q</source>
        <translation>Tq × d_q</translation>
    </message>
    <message>
        <source>Tk × d_kv</source>
        <translation>Tk × d_kv</translation>
    </message>
    <message>
        <source>d_q × H·dK</source>
        <translation>d_q × H·dK</translation>
    </message>
    <message>
        <source>d_kv × H·dK</source>
        <translation>d_kv × H·dK</translation>
    </message>
    <message>
        <source>d_kv × H·dV</source>
        <translation>d_kv × H·dV</translation>
    </message>
    <message>
        <source>H·dV × d_out</source>
        <translation>H·dV × d_out</translation>
    </message>
    <message>
        <source>H·dK</source>
        <translation>H·dK</translation>
    </message>
    <message>
        <source>H·dV</source>
        <translation>H·dV</translation>
    </message>
    <message>
        <source>d_out</source>
        <translation>d_out</translation>
    </message>
    <message>
        <source>Re-initialise</source>
        <translation>重新初始化</translation>
    </message>
    <message>
        <source>Use</source>
        <translation>使用</translation>
    </message>
    <message>
        <source>Include %1 in the computation</source>
        <translation>在计算中包含 %1</translation>
    </message>
    <message>
        <source>Insert token</source>
        <translation>插入词元</translation>
    </message>
    <message>
        <source>Remove token</source>
        <translation>删除词元</translation>
    </message>
    <message>
        <source>Fill %1 anew with the chosen initialisation and seed</source>
        <translation>用所选的初始化方法和种子重新填充 %1</translation>
    </message>
    <message>
        <source>new</source>
        <translation>新</translation>
    </message>
    <message>
        <source>Self-attention: keys and values come from the query input.</source>
        <translation>自注意力：键和值来自查询输入。</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt;: not used</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;：未使用</translation>
    </message>
    <message>
        <source>Tk × d_v: the values&apos; own input; W_V reads it</source>
        <translation>Tk × d_v：值的独立输入；W_V 读取它</translation>
    </message>
    <message>
        <source>No separate value input: the values come from the key input. Check Use to give them their own.</source>
        <translation>没有独立的值输入：值来自键输入。勾选“使用”即可为值提供独立输入。</translation>
    </message>
    <message>
        <source>d_kv × G·dK (G key/value heads)</source>
        <translation>d_kv × G·dK（G 个键值头）</translation>
    </message>
    <message>
        <source>d_kv × G·dV (G key/value heads)</source>
        <translation>d_kv × G·dV（G 个键值头）</translation>
    </message>
    <message>
        <source>G·dK</source>
        <translation>G·dK</translation>
    </message>
    <message>
        <source>G·dV</source>
        <translation>G·dV</translation>
    </message>
    <message>
        <source>H: one logit per query head, joining each row&apos;s softmax</source>
        <translation>H：每个查询头一个 logit，参与每一行的 softmax</translation>
    </message>
</context>
<context>
    <name>attnscope::MatrixModel</name>
    <message>
        <source>token</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>Key/value head %1: read by query heads %2–%3</source>
        <translation>键值头 %1：由查询头 %2–%3 读取</translation>
    </message>
</context>
<context>
    <name>attnscope::ModelController</name>
    <message>
        <source>Memory ran out loading the model.</source>
        <translation>加载模型时内存不足。</translation>
    </message>
    <message>
        <source>Memory ran out running the model on this text.</source>
        <translation>用此文本运行模型时内存不足。</translation>
    </message>
</context>
<context>
    <name>attnscope::ModelPanel</name>
    <message>
        <source>Self-attention</source>
        <translation>自注意力</translation>
    </message>
    <message>
        <source>Cross-attention</source>
        <translation>交叉注意力</translation>
    </message>
    <message>
        <source>1/√dK</source>
        <translation>1/√dK</translation>
    </message>
    <message>
        <source>none (1)</source>
        <translation>无（1）</translation>
    </message>
    <message>
        <source>custom</source>
        <translation>自定义</translation>
    </message>
    <message>
        <source>-inf (masked rows give 0)</source>
        <translation>-inf（全掩码行为 0）</translation>
    </message>
    <message>
        <source>-1e9 (masked rows uniform)</source>
        <translation>-1e9（全掩码行均匀）</translation>
    </message>
    <message>
        <source>Xavier</source>
        <translation>Xavier</translation>
    </message>
    <message>
        <source>Kaiming</source>
        <translation>Kaiming</translation>
    </message>
    <message>
        <source>Gaussian</source>
        <translation>高斯</translation>
    </message>
    <message>
        <source>Zeros</source>
        <translation>全零</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>模式</translation>
    </message>
    <message>
        <source>Heads H</source>
        <translation>头数 H</translation>
    </message>
    <message>
        <source>Head size dK (Q, K)</source>
        <translation>头维度 dK（Q、K）</translation>
    </message>
    <message>
        <source>Head size dV (V)</source>
        <translation>头维度 dV（V）</translation>
    </message>
    <message>
        <source>Query input d_q</source>
        <translation>查询输入 d_q</translation>
    </message>
    <message>
        <source>Key/value input d_kv</source>
        <translation>键/值输入 d_kv</translation>
    </message>
    <message>
        <source>Output d_out (W_O)</source>
        <translation>输出 d_out（W_O）</translation>
    </message>
    <message>
        <source>Scale</source>
        <translation>缩放</translation>
    </message>
    <message>
        <source>Mask fill</source>
        <translation>掩码填充值</translation>
    </message>
    <message>
        <source>New values</source>
        <translation>新值初始化</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>种子</translation>
    </message>
    <message>
        <source>Gaussian std. dev.</source>
        <translation>高斯标准差</translation>
    </message>
    <message>
        <source>Tq = %1, Tk = %2; Q: %1 × %3, K: %2 × %3, V: %2 × %4 (H = %5); scale = %6</source>
        <translation>Tq = %1，Tk = %2；Q：%1 × %3，K：%2 × %3，V：%2 × %4（H = %5）；缩放 = %6</translation>
    </message>
    <message>
        <source>Key/value heads G (grouped-query attention): query head h reads key/value head h / (H/G). 1 is multi-query attention; H, one per head, is plain multi-head attention. G divides H.</source>
        <translation>键值头数 G（分组查询注意力）：查询头 h 读键值头 h / (H/G)。1 为多查询注意力；H（每个头一个）即普通多头注意力。G 必须整除 H。</translation>
    </message>
    <message>
        <source>Key/value heads G</source>
        <translation>键值头 G</translation>
    </message>
    <message>
        <source>%1 (multi-query)</source>
        <translation>%1（多查询）</translation>
    </message>
    <message>
        <source>%1 (one per head)</source>
        <translation>%1（每头一个）</translation>
    </message>
    <message>
        <source>Tq = %1, Tk = %2; Q: %1 × %3, K: %2 × %4, V: %2 × %5 (H = %6, G = %7); scale = %8</source>
        <translation>Tq = %1，Tk = %2；Q：%1 × %3，K：%2 × %4，V：%2 × %5（H = %6，G = %7）；缩放 = %8</translation>
    </message>
</context>
<context>
    <name>attnscope::ModelRunSource</name>
    <message>
        <source>%1 on %2 — %3</source>
        <translation>%1，运行于 %2 — %3</translation>
    </message>
    <message>
        <source>The views show the text run before: running the model on the text as it is now failed.</source>
        <translation>视图显示的是之前运行的文本：用现在的文本运行模型失败了。</translation>
    </message>
    <message>
        <source>Loading the model in %1…</source>
        <translation>正在加载 %1 中的模型…</translation>
    </message>
    <message>
        <source>Model: %1 (%2, %3 layers, %4 heads)</source>
        <translation>模型：%1（%2，%3 层，%4 个头）</translation>
    </message>
    <message>
        <source>%1 layer %2 head %3</source>
        <translation>%1 第 %2 层 第 %3 头</translation>
    </message>
    <message>
        <source>%1, layer %2</source>
        <translation>%1，第 %2 层</translation>
    </message>
    <message>
        <source>Type any text: the model reads it as you type, in any language</source>
        <translation>输入任意文字：模型随输入即时阅读，任何语言都可以</translation>
    </message>
    <message>
        <source>The text the model runs on. Every layer and head shows its attention over these tokens; write a sentence twice to see heads that copy what came before.</source>
        <translation>模型运行所用的文字。每一层、每个头都会显示它在这些词元上的注意力；把一句话写两遍，可以看到复制前文的头。</translation>
    </message>
    <message>
        <source>Text the model reads:</source>
        <translation>模型阅读的文字：</translation>
    </message>
    <message>
        <source>Worth a look: layer 0 head 3 (the previous token), layer 1 head 0 (induction: write the sentence twice)</source>
        <translation>值得一看：第 0 层头 3（前一个词元），第 1 层头 0（归纳头：把句子写两遍）</translation>
    </message>
    <message>
        <source>Model: %1 (%2, %3 layers, %4 query heads sharing %5 key/value heads)</source>
        <translation>模型：%1（%2，%3 层，%4 个查询头共享 %5 个键值头）</translation>
    </message>
    <message>
        <source>Worth a look: layer 0 head 2 (the previous token), layer 1 (induction: type a Chinese sentence twice)</source>
        <translation>值得一看：第 0 层头 2（前一个词元），第 1 层（归纳头：把一句中文输入两遍）</translation>
    </message>
    <message>
        <source>Generation</source>
        <translation>生成</translation>
    </message>
    <message>
        <source>Save the Generation into a Folder</source>
        <translation>把生成结果保存到文件夹</translation>
    </message>
    <message>
        <source>Saved tokens.json and attentions.npy in %1</source>
        <translation>已在 %1 中保存 tokens.json 和 attentions.npy</translation>
    </message>
    <message>
        <source>BERT has no language-model head: it reads text but cannot generate.</source>
        <translation>BERT 没有语言模型头：它能读文本，但不能生成。</translation>
    </message>
    <message>
        <source>Generating after “%1”…</source>
        <translation>在“%1”之后生成…</translation>
    </message>
    <message numerus="yes">
        <source>Generated %n token(s)</source>
        <translation>
            <numerusform>已生成 %n 个词元</numerusform>
        </translation>
    </message>
    <message>
        <source>There is no generation to save.</source>
        <translation>没有可保存的生成结果。</translation>
    </message>
    <message>
        <source>Compare With Another &amp;Text…</source>
        <translation>与另一段文本比较(&amp;T)…</translation>
    </message>
    <message>
        <source>This text on this model as A, and another text to type as B: the views then show B − A, head by head.</source>
        <translation>以本模型上的这段文本为 A，另输入一段文本为 B：各视图随后逐头显示 B − A。</translation>
    </message>
</context>
<context>
    <name>attnscope::ModelView</name>
    <message>
        <source>Layer %1</source>
        <translation>第 %1 层</translation>
    </message>
    <message>
        <source>Computing…</source>
        <translation>正在计算…</translation>
    </message>
    <message>
        <source>Head %1</source>
        <translation>头 %1</translation>
    </message>
    <message>
        <source>Computing the thumbnails… %1%</source>
        <translation>正在计算缩略图… %1%</translation>
    </message>
    <message>
        <source>Layer %1, head %2</source>
        <translation>第 %1 层，头 %2</translation>
    </message>
    <message>
        <source>%1 query heads sharing %2 key/value heads</source>
        <translation>%1 个查询头共享 %2 个键/值头</translation>
    </message>
    <message>
        <source>%1 heads, each with its own keys and values</source>
        <translation>%1 个头，每个头有自己的键和值</translation>
    </message>
    <message>
        <source>sliding window of %1 tokens</source>
        <translation>%1 个词元的滑动窗口</translation>
    </message>
    <message>
        <source>scores scaled by %1</source>
        <translation>分数乘以 %1</translation>
    </message>
    <message>
        <source>window %1</source>
        <translation>窗口 %1</translation>
    </message>
    <message>
        <source>K/V %1</source>
        <translation>键值 %1</translation>
    </message>
</context>
<context>
    <name>attnscope::ModernAttentionPanel</name>
    <message>
        <source>RoPE</source>
        <translation>RoPE</translation>
    </message>
    <message>
        <source>Soft-cap</source>
        <translation>软上限</translation>
    </message>
    <message>
        <source>Rotary position embeddings: each head&apos;s q and k are turned by their position p; dimension i pairs with i + dK/2 at angle p·base^(-2i/dK). dK must be even.</source>
        <translation>旋转位置编码：每个头的 q 和 k 按位置 p 旋转；第 i 维与第 i + dK/2 维成对，角度为 p·base^(-2i/dK)。dK 必须为偶数。</translation>
    </message>
    <message>
        <source>RoPE base (theta): a number above 0; 10000 in most models</source>
        <translation>RoPE 基数（theta）：大于 0 的数；大多数模型为 10000</translation>
    </message>
    <message>
        <source>Whole numbers of 0 or more, one per token, separated by spaces or commas; empty: 0, 1, 2, … Causal and the window compare these positions.</source>
        <translation>0 或更大的整数，每个词元一个，用空格或逗号分隔；留空：0, 1, 2, … 因果掩码和窗口比较的就是这些位置。</translation>
    </message>
    <message>
        <source>Soft-capping c: scores become c·tanh(scores / c) before the mask</source>
        <translation>软上限 c：在掩码之前，分数变为 c·tanh(分数 / c)</translation>
    </message>
    <message>
        <source>Soft-cap c: a number above 0</source>
        <translation>软上限 c：大于 0 的数</translation>
    </message>
    <message>
        <source>Modern attention</source>
        <translation>现代注意力</translation>
    </message>
    <message>
        <source>Query positions</source>
        <translation>查询位置</translation>
    </message>
    <message>
        <source>Key positions</source>
        <translation>键位置</translation>
    </message>
    <message>
        <source>Scores</source>
        <translation>分数</translation>
    </message>
    <message>
        <source>0, 1, …, %1 (one per query token)</source>
        <translation>0, 1, …, %1（每个查询词元一个）</translation>
    </message>
    <message>
        <source>0, 1, …, %1 (one per key token)</source>
        <translation>0, 1, …, %1（每个键词元一个）</translation>
    </message>
    <message>
        <source>the query positions</source>
        <translation>与查询位置相同</translation>
    </message>
    <message>
        <source>Position encoding</source>
        <translation>位置编码</translation>
    </message>
</context>
<context>
    <name>attnscope::OpenModelDialog</name>
    <message>
        <source>Open Model</source>
        <translation>打开模型</translation>
    </message>
    <message>
        <source>Looking for models in the Hugging Face cache, %1…</source>
        <translation>正在 Hugging Face 缓存 %1 中查找模型…</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Family</source>
        <translation>系列</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Can AttnScope open it?</source>
        <translation>AttnScope 能打开吗？</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>Open &amp;Folder…</source>
        <translation>打开文件夹(&amp;F)…</translation>
    </message>
    <message>
        <source>Open a Model Folder</source>
        <translation>打开模型文件夹</translation>
    </message>
    <message>
        <source>No models in the Hugging Face cache, %1. Open a folder instead.</source>
        <translation>Hugging Face 缓存 %1 中没有模型。请改为打开一个文件夹。</translation>
    </message>
    <message>
        <source>Models in the Hugging Face cache, %1:</source>
        <translation>Hugging Face 缓存 %1 中的模型：</translation>
    </message>
    <message>
        <source>%1
revision %2</source>
        <translation>%1
修订 %2</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>Yes</source>
        <translation>能</translation>
    </message>
    <message>
        <source>AttnScope can open this model</source>
        <translation>AttnScope 能打开这个模型</translation>
    </message>
</context>
<context>
    <name>attnscope::PooledHeatmapView</name>
    <message>
        <source>Computing %p%</source>
        <translation>正在计算 %p%</translation>
    </message>
    <message>
        <source>Mean over heads</source>
        <translation>各头平均</translation>
    </message>
    <message>
        <source>Head %1</source>
        <translation>头 %1</translation>
    </message>
    <message>
        <source>Queries %1–%2 × keys %3–%4, exact (one cell per token), computed in %5 ms</source>
        <translation>查询 %1–%2 × 键 %3–%4，精确（每个词元一格），计算用时 %5 毫秒</translation>
    </message>
    <message>
        <source>Queries %1–%2 × keys %3–%4, max-pooled to %5 × %6 cells, computed in %7 ms</source>
        <translation>查询 %1–%2 × 键 %3–%4，最大池化为 %5 × %6 格，计算用时 %7 毫秒</translation>
    </message>
    <message>
        <source>Computing the pooled attention…</source>
        <translation>正在计算池化注意力…</translation>
    </message>
    <message>
        <source>Only attention weights are pooled: scores are not computed for long sequences, so the map shows weights.</source>
        <translation>只有注意力权重会被池化：长序列不计算分数，因此图中显示的是权重。</translation>
    </message>
    <message>
        <source>Each cell: one attention weight averaged over heads (exact).</source>
        <translation>每个单元格：一个按头平均的注意力权重（精确）。</translation>
    </message>
    <message>
        <source>Each cell: the maximum over its block of the attention weights averaged over heads.</source>
        <translation>每个单元格：其区块内按头平均的注意力权重的最大值。</translation>
    </message>
    <message>
        <source>Each cell: one attention weight of head %1 (exact).</source>
        <translation>每个单元格：头 %1 的一个注意力权重（精确）。</translation>
    </message>
    <message>
        <source>Each cell: the maximum over its block of head %1&apos;s attention weights.</source>
        <translation>每个单元格：其区块内头 %1 的注意力权重的最大值。</translation>
    </message>
    <message>
        <source>Query %1: “%2”</source>
        <translation>查询 %1：“%2”</translation>
    </message>
    <message>
        <source>Query %1</source>
        <translation>查询 %1</translation>
    </message>
    <message>
        <source>Queries %1–%2 (%3 tokens)</source>
        <translation>查询 %1–%2（%3 个词元）</translation>
    </message>
    <message>
        <source>Key %1: “%2”</source>
        <translation>键 %1：“%2”</translation>
    </message>
    <message>
        <source>Key %1</source>
        <translation>键 %1</translation>
    </message>
    <message>
        <source>Keys %1–%2 (%3 tokens)</source>
        <translation>键 %1–%2（%3 个词元）</translation>
    </message>
    <message>
        <source>Weight averaged over heads: %1</source>
        <translation>按头平均的权重：%1</translation>
    </message>
    <message>
        <source>Largest weight averaged over heads in this block: %1</source>
        <translation>此区块内按头平均的最大权重：%1</translation>
    </message>
    <message>
        <source>Weight of head %1: %2</source>
        <translation>头 %1 的权重：%2</translation>
    </message>
    <message>
        <source>Largest weight of head %1 in this block: %2</source>
        <translation>此区块内头 %1 的最大权重：%2</translation>
    </message>
    <message>
        <source>%1: queries %2–%3, keys %4–%5</source>
        <translation>%1：查询 %2–%3，键 %4–%5</translation>
    </message>
    <message>
        <source>%1, each cell the maximum over its block</source>
        <translation>%1，每格为其所在块内的最大值</translation>
    </message>
    <message>
        <source>%1 — mean over heads</source>
        <translation>%1 — 各头平均</translation>
    </message>
    <message>
        <source>%1 — head %2</source>
        <translation>%1 — 头 %2</translation>
    </message>
</context>
<context>
    <name>attnscope::PooledJobs</name>
    <message>
        <source>out of memory while computing the pooled attention</source>
        <translation>计算池化注意力时内存不足</translation>
    </message>
</context>
<context>
    <name>attnscope::PresentationMode</name>
    <message>
        <source>&amp;Presentation Mode</source>
        <translation>演示模式(&amp;P)</translation>
    </message>
    <message>
        <source>Full screen with larger text, for a projector (F11 or Esc to leave)</source>
        <translation>全屏并放大文字，适合投影（按 F11 或 Esc 退出）</translation>
    </message>
</context>
<context>
    <name>attnscope::ProjectSource</name>
    <message>
        <source>New project</source>
        <translation>新项目</translation>
    </message>
    <message>
        <source>Opened %1</source>
        <translation>已打开 %1</translation>
    </message>
    <message>
        <source>Saved %1</source>
        <translation>已保存 %1</translation>
    </message>
    <message>
        <source>AttnScope</source>
        <translation>AttnScope</translation>
    </message>
    <message>
        <source>Saved %1; some matrices are written in it now instead of as their .npy files:</source>
        <translation>已保存 %1；其中一些矩阵现在直接写入项目，而不再引用其 .npy 文件：</translation>
    </message>
    <message>
        <source>%1: %2 changed on disk since it was opened; the values shown are saved in the project instead.</source>
        <translation>%1：%2 在打开后已在磁盘上被修改；改为将所显示的数值保存在项目中。</translation>
    </message>
    <message>
        <source>%1: %2 could not be read again (%3); the values shown are saved in the project instead.</source>
        <translation>%1：无法再次读取 %2（%3）；改为将所显示的数值保存在项目中。</translation>
    </message>
    <message>
        <source>%1 was copied beside it as %2.</source>
        <translation>%1 已作为 %2 复制到其旁边。</translation>
    </message>
    <message>
        <source>%1: %2 could not be copied beside the project (%3); its values are saved in the project instead.</source>
        <translation>%1：无法将 %2 复制到项目旁边（%3）；改为将其数值保存在项目中。</translation>
    </message>
    <message>
        <source>“%1” has unsaved changes. Save them?</source>
        <translation>“%1”有未保存的更改。要保存吗？</translation>
    </message>
    <message>
        <source>untitled</source>
        <translation>未命名</translation>
    </message>
    <message>
        <source>Save project</source>
        <translation>保存项目</translation>
    </message>
    <message>
        <source>AttnScope projects (*.attnscope.json *.json);;All files (*)</source>
        <translation>AttnScope 项目 (*.attnscope.json *.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Recover unsaved changes</source>
        <translation>恢复未保存的更改</translation>
    </message>
    <message>
        <source>AttnScope did not close normally, and a copy of unsaved changes it kept cannot be read: %1</source>
        <translation>AttnScope 未正常关闭，且其保留的未保存更改副本无法读取：%1</translation>
    </message>
    <message>
        <source>Keep leaves it in %1 for later; Discard deletes it.</source>
        <translation>“保留”将其留在 %1 以便以后处理；“丢弃”将其删除。</translation>
    </message>
    <message>
        <source>&amp;Keep</source>
        <translation>保留(&amp;K)</translation>
    </message>
    <message>
        <source>&amp;Discard</source>
        <translation>丢弃(&amp;D)</translation>
    </message>
    <message>
        <source>an untitled project</source>
        <translation>一个未命名项目</translation>
    </message>
    <message>
        <source>AttnScope did not close normally. Unsaved changes to %1 from %2 were kept.</source>
        <translation>AttnScope 上次没有正常关闭。%1 在 %2 的未保存更改已被保留。</translation>
    </message>
    <message>
        <source>Recover opens them as a modified document; Discard deletes them.</source>
        <translation>“恢复”会将它们作为已修改的文档打开；“丢弃”会删除它们。</translation>
    </message>
    <message>
        <source>&amp;Recover</source>
        <translation>恢复(&amp;R)</translation>
    </message>
    <message>
        <source>Recovered unsaved changes to %1</source>
        <translation>已恢复 %1 的未保存更改</translation>
    </message>
    <message>
        <source>Even the pooled view does not fit: use fewer tokens or fewer heads.</source>
        <translation>连池化视图也容纳不下：请减少词元或注意力头的数量。</translation>
    </message>
    <message>
        <source>This project needs %1 for full attention and %2 even pooled; this machine allows %3. Use fewer tokens or heads, or compute it pooled with fewer bins (attnscope-cli compute --pool 256).</source>
        <translation>完整注意力需要 %1 内存，即使池化也需要 %2；本机只允许 %3。请减少词元或注意力头的数量，或用更少的分箱以池化方式计算（attnscope-cli compute --pool 256）。</translation>
    </message>
    <message>
        <source>This project needs %1 for full attention; showing pooled attention (%2×%2) instead. Zoom with the mouse wheel or + and - to see any block exactly; drag or use the arrow keys to pan, and Home (or a double-click) shows the whole.</source>
        <translation>此项目的完整注意力需要 %1；改为显示池化注意力（%2×%2）。用鼠标滚轮或 + 和 - 放大，可精确查看任意区块；拖动或用方向键平移，按 Home 键（或双击）显示全部。</translation>
    </message>
    <message>
        <source>pooled view</source>
        <translation>池化视图</translation>
    </message>
    <message>
        <source>Backend: %1 — %2</source>
        <translation>后端：%1 — %2</translation>
    </message>
    <message>
        <source>computing…</source>
        <translation>正在计算…</translation>
    </message>
    <message>
        <source>&amp;Save</source>
        <translation>保存(&amp;S)</translation>
    </message>
    <message>
        <source>Save &amp;As…</source>
        <translation>另存为(&amp;A)…</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Mask</source>
        <translation>掩码</translation>
    </message>
    <message>
        <source>Query tokens</source>
        <translation>查询词元</translation>
    </message>
    <message>
        <source>Key/value tokens</source>
        <translation>键/值词元</translation>
    </message>
    <message>
        <source>Inputs</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>History</source>
        <translation>历史</translation>
    </message>
    <message>
        <source>%1[*] — AttnScope</source>
        <translation>%1[*] — AttnScope</translation>
    </message>
    <message>
        <source>figure</source>
        <translation>figure</translation>
    </message>
    <message>
        <source>The GPU stopped answering (device lost). Choose Backend &gt; CPU or Automatic to go on.</source>
        <translation>GPU 停止响应（设备丢失）。请选择“后端 &gt; CPU”或“自动”以继续。</translation>
    </message>
    <message>
        <source>Memory ran out. Make the project smaller (fewer tokens, heads or dimensions), or choose Backend &gt; CPU if the GPU&apos;s memory ran out.</source>
        <translation>内存不足。请缩小项目（减少词元、头数或维度）；如果是 GPU 内存不足，请选择“后端 &gt; CPU”。</translation>
    </message>
    <message>
        <source>The project is too large for this machine&apos;s memory: make it smaller, or compute it pooled (attnscope-cli compute --pool 1024).</source>
        <translation>项目太大，本机内存容纳不下：请缩小项目，或以池化方式计算（attnscope-cli compute --pool 1024）。</translation>
    </message>
    <message>
        <source>This device cannot run it. Choose Backend &gt; CPU or Automatic.</source>
        <translation>此设备无法运行该计算。请选择“后端 &gt; CPU”或“自动”。</translation>
    </message>
    <message>
        <source>The numbers overflowed float32: use smaller values or a smaller scale.</source>
        <translation>数值超出了 float32 范围：请使用更小的数值或缩放因子。</translation>
    </message>
    <message>
        <source>compute failed</source>
        <translation>计算失败</translation>
    </message>
    <message>
        <source>The views show an earlier result: computing the project as it is now failed.</source>
        <translation>视图显示的是之前的结果：按项目当前状态计算失败了。</translation>
    </message>
    <message>
        <source>computed in %1 ms</source>
        <translation>计算用时 %1 毫秒</translation>
    </message>
    <message>
        <source>Backend: starting…</source>
        <translation>后端：正在启动…</translation>
    </message>
    <message>
        <source>Value input</source>
        <translation>值输入</translation>
    </message>
    <message>
        <source>Compare With Sa&amp;ved</source>
        <translation>与已保存的比较(&amp;V)</translation>
    </message>
    <message>
        <source>The project as saved (A) and as edited now (B), in a new window: the views there show B − A. The edits stay here, unsaved.</source>
        <translation>在新窗口中比较已保存的项目（A）和现在编辑后的项目（B）：那里的视图显示 B − A。编辑内容留在这里，不会保存。</translation>
    </message>
</context>
<context>
    <name>attnscope::RolloutView</name>
    <message>
        <source>Attention rollout of one layer</source>
        <translation>单层的注意力展开</translation>
    </message>
    <message>
        <source>Attention rollout over %1 layers</source>
        <translation>%1 层的注意力展开</translation>
    </message>
    <message>
        <source>Computing…</source>
        <translation>正在计算…</translation>
    </message>
</context>
<context>
    <name>attnscope::SetSource</name>
    <message>
        <source>Layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>&amp;Merge Sub-word Tokens into Words</source>
        <translation>将子词词元合并为词(&amp;M)</translation>
    </message>
    <message>
        <source>Layer </source>
        <translation>层 </translation>
    </message>
    <message>
        <source>The layer the heads, the enlarged head, the mean and the head view show.</source>
        <translation>各头、放大的头、平均值和头视图所显示的层。</translation>
    </message>
    <message>
        <source>Show attention between words: a word&apos;s pieces are summed as keys and averaged as queries.</source>
        <translation>显示词与词之间的注意力：一个词的各片段作为键时求和，作为查询时取平均。</translation>
    </message>
    <message>
        <source>Opened %1 (read-only)</source>
        <translation>已打开 %1（只读）</translation>
    </message>
    <message>
        <source>%1 layers, %2 heads, %3 × %4 tokens</source>
        <translation>%1 层，%2 个头，%3 × %4 个词元</translation>
    </message>
    <message>
        <source>%1 (read-only) — AttnScope</source>
        <translation>%1（只读）— AttnScope</translation>
    </message>
    <message>
        <source>figure</source>
        <translation>figure</translation>
    </message>
    <message>
        <source>%1, layer %2</source>
        <translation>%1，第 %2 层</translation>
    </message>
    <message>
        <source>Long attention file: heads open pooled (tab Head, pooled); the mouse wheel zooms to exact values.</source>
        <translation>长注意力文件：各头以池化方式显示（“头（池化）”标签页）；用鼠标滚轮放大可看到精确值。</translation>
    </message>
    <message>
        <source>Long attention, computed from queries and keys: heads open pooled (tab Head, pooled); the mouse wheel zooms to exact values.</source>
        <translation>长注意力，由查询和键计算：各头以池化方式显示（“头（池化）”标签页）；用鼠标滚轮放大可看到精确值。</translation>
    </message>
</context>
<context>
    <name>attnscope::SideBySideView</name>
    <message>
        <source>B − A</source>
        <translation>B − A</translation>
    </message>
</context>
<context>
    <name>attnscope::StatsTable</name>
    <message>
        <source>Find Heads Like This</source>
        <translation>查找相似的头</translation>
    </message>
</context>
<context>
    <name>attnscope::TeachingView</name>
    <message>
        <source>&lt;p&gt;Computing…&lt;/p&gt;</source>
        <translation>&lt;p&gt;正在计算…&lt;/p&gt;</translation>
    </message>
</context>
<context>
    <name>attnscope::TranslationController</name>
    <message>
        <source>Memory ran out loading the model.</source>
        <translation>载入模型时内存不足。</translation>
    </message>
    <message>
        <source>The source: </source>
        <translation>源文本：</translation>
    </message>
    <message>
        <source>The target: </source>
        <translation>目标文本：</translation>
    </message>
    <message>
        <source>Memory ran out translating this text.</source>
        <translation>翻译这段文本时内存不足。</translation>
    </message>
</context>
<context>
    <name>attnscope::TranslationSource</name>
    <message>
        <source>%1, layer %2</source>
        <translation>%1，第 %2 层</translation>
    </message>
    <message>
        <source>Type a sentence in the model&apos;s source language: it is translated as you type</source>
        <translation>输入一句模型源语言的句子：边输入边翻译</translation>
    </message>
    <message>
        <source>The encoder reads this text; the decoder&apos;s cross-attention looks back at its tokens.</source>
        <translation>编码器读这段文本；解码器的交叉注意力回看它的词元。</translation>
    </message>
    <message>
        <source>Empty: the model&apos;s own translation. Type one to teacher-force it</source>
        <translation>留空：模型自己的翻译。输入一句译文则用教师强制</translation>
    </message>
    <message>
        <source>A translation typed here is fed to the decoder as it is (teacher forcing), so you see where each of its words looks in the source; left empty, the model translates greedily and the views show its own words.</source>
        <translation>在这里输入的译文会原样送入解码器（教师强制），你能看到它的每个词在源句中看向哪里；留空时，模型用贪心解码翻译，视图显示它自己的译文。</translation>
    </message>
    <message>
        <source>Cross-attention (target → source)</source>
        <translation>交叉注意力（目标 → 源）</translation>
    </message>
    <message>
        <source>Encoder self-attention (source)</source>
        <translation>编码器自注意力（源）</translation>
    </message>
    <message>
        <source>Decoder self-attention (target)</source>
        <translation>解码器自注意力（目标）</translation>
    </message>
    <message>
        <source>Which attention the views show: the encoder reading the source, the decoder reading the target so far, or the decoder&apos;s queries over the encoder&apos;s source tokens.</source>
        <translation>视图显示哪种注意力：编码器读源句，解码器读目前为止的目标句，或解码器的查询看向编码器的源词元。</translation>
    </message>
    <message>
        <source>Source:</source>
        <translation>源文本：</translation>
    </message>
    <message>
        <source>Target:</source>
        <translation>目标文本：</translation>
    </message>
    <message>
        <source>Show:</source>
        <translation>显示：</translation>
    </message>
    <message>
        <source>Alignment</source>
        <translation>对齐</translation>
    </message>
    <message>
        <source>Translating…</source>
        <translation>正在翻译…</translation>
    </message>
    <message>
        <source>%1 on %2 — %3</source>
        <translation>%1，在 %2 上 — %3</translation>
    </message>
    <message>
        <source>The views show the translation before: translating the text as it is now failed.</source>
        <translation>视图显示的是之前的翻译：翻译当前文本失败。</translation>
    </message>
    <message>
        <source>Loading the translation model in %1…</source>
        <translation>正在载入 %1 中的翻译模型…</translation>
    </message>
    <message>
        <source>Translation model: %1 (Marian, encoder %2 layers × %3 heads, decoder %4 layers × %5 heads)</source>
        <translation>翻译模型：%1（Marian，编码器 %2 层 × %3 个头，解码器 %4 层 × %5 个头）</translation>
    </message>
    <message>
        <source>Translation: %1</source>
        <translation>译文：%1</translation>
    </message>
    <message>
        <source>encoder</source>
        <translation>编码器</translation>
    </message>
    <message>
        <source>decoder</source>
        <translation>解码器</translation>
    </message>
    <message>
        <source>cross-attention</source>
        <translation>交叉注意力</translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <source>Alignment: cross-attention of decoder layer %1</source>
        <translation>对齐：解码器第 %1 层的交叉注意力</translation>
    </message>
    <message>
        <source>%1 %2 layer %3 head %4</source>
        <translation>%1 %2 第 %3 层 头 %4</translation>
    </message>
</context>
<context>
    <name>attnscope::ViewToolBar</name>
    <message>
        <source>View</source>
        <translation>视图</translation>
    </message>
    <message>
        <source>Values</source>
        <translation>数值</translation>
    </message>
    <message>
        <source>Overlay heads</source>
        <translation>叠加各头</translation>
    </message>
    <message>
        <source>Weights (softmax)</source>
        <translation>权重（softmax）</translation>
    </message>
    <message>
        <source>Scores (scaled, before mask)</source>
        <translation>分数（已缩放，掩码前）</translation>
    </message>
    <message>
        <source>Scale 0..1</source>
        <translation>色阶 0..1</translation>
    </message>
    <message>
        <source>Shared scale</source>
        <translation>共用色阶</translation>
    </message>
    <message>
        <source>Per-head scale</source>
        <translation>每头色阶</translation>
    </message>
    <message>
        <source>How values map to colours: log and percentile show the structure of long heads.</source>
        <translation>数值如何映射为颜色：对数和百分位刻度能显示长序列注意力头的结构。</translation>
    </message>
    <message>
        <source> Colours </source>
        <translation> 颜色 </translation>
    </message>
    <message>
        <source>Sink apart</source>
        <translation>单独显示汇聚</translation>
    </message>
    <message>
        <source>Model view: show each map&apos;s first token (where many heads park their attention) as a thin bar beside the map, and leave it out of the colour scale. The log scale is another way to see past it.</source>
        <translation>模型视图：把每张图的第一个词元（许多头把注意力停放在那里）画成图旁的一条细条，并且不计入色阶。对数色阶是看清其余部分的另一种方法。</translation>
    </message>
</context>
<context>
    <name>attnscope::WindowStatus</name>
    <message>
        <source>Backend: starting…</source>
        <translation>后端：正在启动…</translation>
    </message>
    <message>
        <source>Computing %p%</source>
        <translation>正在计算 %p%</translation>
    </message>
    <message>
        <source>AttnScope</source>
        <translation>AttnScope</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>See every attention head.</source>
        <translation>看清每一个注意力头。</translation>
    </message>
    <message>
        <source>A project (.attnscope.json) or an attention file (.npy, .npz, .safetensors) to open.</source>
        <translation>要打开的项目 (.attnscope.json) 或注意力文件 (.npy, .npz, .safetensors)。</translation>
    </message>
    <message>
        <source>Open the built-in example model (a small GPT-2) instead of a file.</source>
        <translation>打开内置的示例模型（一个小型 GPT-2），而不是文件。</translation>
    </message>
</context>
</TS>
