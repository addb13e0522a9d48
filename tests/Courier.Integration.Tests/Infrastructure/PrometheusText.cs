using System.Globalization;
using System.Text;

namespace Courier.Integration.Tests.Infrastructure;

/// <summary>One sample of a Prometheus text exposition: its name, labels and value.</summary>
public sealed record PrometheusSample(string Name, IReadOnlyDictionary<string, string> Labels, double Value);

/// <summary>One metric family: its <c># TYPE</c>, <c># HELP</c> and samples.</summary>
public sealed record PrometheusFamily(string Name, string Type, string? Help, List<PrometheusSample> Samples);

/// <summary>
/// A strict parser of Prometheus' text exposition format 0.0.4 (no maintained parser package restores
/// from the mirror): every line is a <c># HELP</c>, a <c># TYPE</c>, another comment or a sample;
/// metric and label names follow the grammar; a family's TYPE comes once, before its samples; every
/// sample belongs to a typed family (histogram and summary samples by their suffixes); label values
/// use only the format's escapes; no series appears twice. Anything else fails the test with the line.
/// </summary>
public static class PrometheusText
{
    /// <summary>The family <paramref name="name"/> of <paramref name="metrics"/>, which must be there with <paramref name="type"/>.</summary>
    public static PrometheusFamily Family(Dictionary<string, PrometheusFamily> metrics, string name, string type = "gauge")
    {
        Xunit.Assert.True(metrics.TryGetValue(name, out var family), $"no family {name}");
        Xunit.Assert.Equal(type, family.Type);
        return family;
    }

    private static readonly HashSet<string> Types = ["counter", "gauge", "histogram", "summary", "untyped"];

    public static Dictionary<string, PrometheusFamily> Parse(string text)
    {
        var families = new Dictionary<string, PrometheusFamily>(StringComparer.Ordinal);
        var helps = new Dictionary<string, string>(StringComparer.Ordinal);
        var series = new HashSet<string>(StringComparer.Ordinal);
        Assert.True(text.Length == 0 || text.EndsWith('\n'), "the exposition does not end with a line feed");
        var lines = text.Split('\n');
        for (var n = 0; n < lines.Length - 1; n++)
        {
            var line = lines[n];
            var where = $"line {n + 1}: {line}";
            if (line.Length == 0)
            {
                continue;
            }

            if (line.StartsWith("# HELP ", StringComparison.Ordinal) || line.StartsWith("# TYPE ", StringComparison.Ordinal))
            {
                var rest = line[7..];
                var space = rest.IndexOf(' ', StringComparison.Ordinal);
                var name = space < 0 ? rest : rest[..space];
                var argument = space < 0 ? "" : rest[(space + 1)..];
                Assert.True(IsMetricName(name), $"bad metric name in {where}");
                if (line[2] == 'H')
                {
                    Assert.True(helps.TryAdd(name, argument), $"second HELP in {where}");
                }
                else
                {
                    Assert.True(Types.Contains(argument), $"unknown type in {where}");
                    Assert.False(families.ContainsKey(name), $"second TYPE in {where}");
                    families.Add(name, new PrometheusFamily(name, argument, null, []));
                }

                continue;
            }

            if (line[0] == '#')
            {
                continue;
            }

            var sample = ParseSample(line, where);
            var family = FamilyOf(families, sample.Name);
            Assert.True(family is not null, $"sample of no typed family (TYPE must come first) in {where}");
            var key = sample.Name + "{" + string.Join(",", sample.Labels.OrderBy(l => l.Key, StringComparer.Ordinal).Select(l => $"{l.Key}={l.Value}")) + "}";
            Assert.True(series.Add(key), $"series twice in {where}");
            family.Samples.Add(sample);
        }

        return families.ToDictionary(f => f.Key, f => f.Value with { Help = helps.GetValueOrDefault(f.Key) }, StringComparer.Ordinal);
    }

    private static PrometheusFamily? FamilyOf(Dictionary<string, PrometheusFamily> families, string sampleName)
    {
        if (families.TryGetValue(sampleName, out var family))
        {
            return family;
        }

        foreach (var suffix in new[] { "_bucket", "_sum", "_count" })
        {
            if (sampleName.EndsWith(suffix, StringComparison.Ordinal)
                && families.TryGetValue(sampleName[..^suffix.Length], out family)
                && family.Type is "histogram" or "summary"
                && (suffix != "_bucket" || family.Type == "histogram"))
            {
                return family;
            }
        }

        return null;
    }

    // metric_name [ "{" label_name "=" `"` label_value `"` { "," ... } [ "," ] "}" ] value [ timestamp ]
    private static PrometheusSample ParseSample(string line, string where)
    {
        var i = 0;
        while (i < line.Length && line[i] != '{' && line[i] != ' ')
        {
            i++;
        }

        var name = line[..i];
        Assert.True(IsMetricName(name), $"bad metric name in {where}");
        var labels = new Dictionary<string, string>(StringComparer.Ordinal);
        if (i < line.Length && line[i] == '{')
        {
            i++;
            while (true)
            {
                Assert.True(i < line.Length, $"unterminated labels in {where}");
                if (line[i] == '}')
                {
                    i++;
                    break;
                }

                var start = i;
                while (i < line.Length && line[i] != '=')
                {
                    i++;
                }

                var label = line[start..i];
                Assert.True(IsLabelName(label), $"bad label name '{label}' in {where}");
                Assert.True(i + 1 < line.Length && line[i + 1] == '"', $"label value not quoted in {where}");
                i += 2;
                var value = new StringBuilder();
                while (true)
                {
                    Assert.True(i < line.Length, $"unterminated label value in {where}");
                    var c = line[i++];
                    if (c == '"')
                    {
                        break;
                    }

                    if (c == '\\')
                    {
                        Assert.True(i < line.Length, $"dangling escape in {where}");
                        var e = line[i++];
                        value.Append(e switch
                        {
                            '\\' => '\\',
                            '"' => '"',
                            'n' => '\n',
                            _ => throw new Xunit.Sdk.XunitException($"bad escape \\{e} in {where}"),
                        });
                        continue;
                    }

                    value.Append(c);
                }

                Assert.True(labels.TryAdd(label, value.ToString()), $"label '{label}' twice in {where}");
                Assert.True(i < line.Length && (line[i] == ',' || line[i] == '}'), $"expected , or }} after a label in {where}");
                if (line[i] == ',')
                {
                    i++;
                }
            }
        }

        Assert.True(i < line.Length && line[i] == ' ', $"no value in {where}");
        var fields = line[(i + 1)..].Split(' ');
        Assert.True(fields.Length is 1 or 2, $"expected a value and at most a timestamp in {where}");
        Assert.True(TryParseValue(fields[0], out var number), $"bad value in {where}");
        Assert.True(fields.Length == 1 || long.TryParse(fields[1], NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out _), $"bad timestamp in {where}");
        return new PrometheusSample(name, labels, number);
    }

    private static bool TryParseValue(string text, out double value)
    {
        switch (text)
        {
            case "+Inf":
                value = double.PositiveInfinity;
                return true;
            case "-Inf":
                value = double.NegativeInfinity;
                return true;
            case "NaN":
                value = double.NaN;
                return true;
            default:
                return double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out value);
        }
    }

    // [a-zA-Z_:][a-zA-Z0-9_:]*
    private static bool IsMetricName(string name) =>
        name.Length > 0 && name.Select((c, i) => char.IsAsciiLetter(c) || c is '_' or ':' || (i > 0 && char.IsAsciiDigit(c))).All(ok => ok);

    // [a-zA-Z_][a-zA-Z0-9_]*
    private static bool IsLabelName(string name) =>
        name.Length > 0 && name.Select((c, i) => char.IsAsciiLetter(c) || c == '_' || (i > 0 && char.IsAsciiDigit(c))).All(ok => ok);
}
