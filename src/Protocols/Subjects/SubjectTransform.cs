using System.Globalization;

namespace Courier.Protocols.Subjects;

/// <summary>
/// A subject mapping from a source pattern to a destination, with nats-server's rules
/// (accounts.go newTransform): the destination has no <c>*</c>; a source <c>&gt;</c> needs a
/// destination <c>&gt;</c> (the rest of the subject goes there); <c>$N</c> and
/// <c>{{wildcard(N)}}</c> place the N-th <c>*</c> of the source, and every source <c>*</c> must be
/// placed. Used by a stream's <c>republish</c>; cold path (one string per transformed message).
/// </summary>
public sealed class SubjectTransform
{
    private readonly string _source;
    private readonly string[] _sourceTokens;
    private readonly string[] _destinationTokens;

    // Per destination token: -1 literal, -2 the trailing '>', else the source token index it takes.
    private readonly int[] _mapping;

    private SubjectTransform(string source, string[] sourceTokens, string[] destinationTokens, int[] mapping)
    {
        _source = source;
        _sourceTokens = sourceTokens;
        _destinationTokens = destinationTokens;
        _mapping = mapping;
    }

    /// <summary>The transform, or null when nats-server would refuse it.</summary>
    public static SubjectTransform? TryCreate(string source, string destination)
    {
        if (!SubjectRules.IsValidSubject(source) || !SubjectRules.IsValidSubject(destination))
        {
            return null;
        }

        var sourceTokens = source.Split('.');
        var destinationTokens = destination.Split('.');
        var sourceWildcards = new List<int>();
        for (var i = 0; i < sourceTokens.Length; i++)
        {
            if (sourceTokens[i] == "*")
            {
                sourceWildcards.Add(i);
            }
        }

        var sourceHasFull = sourceTokens[^1] == ">";
        var destinationHasFull = destinationTokens[^1] == ">";
        if (sourceHasFull != destinationHasFull || Array.IndexOf(destinationTokens, "*") >= 0)
        {
            return null;
        }

        var mapping = new int[destinationTokens.Length];
        var placed = 0;
        for (var i = 0; i < destinationTokens.Length; i++)
        {
            var token = destinationTokens[i];
            if (token == ">")
            {
                mapping[i] = -2;
                continue;
            }

            var index = PlaceholderIndex(token);
            if (index == 0)
            {
                mapping[i] = -1;
                continue;
            }

            if (index < 0 || index > sourceWildcards.Count)
            {
                return null;
            }

            mapping[i] = sourceWildcards[index - 1];
            placed++;
        }

        return placed < sourceWildcards.Count ? null : new SubjectTransform(source, sourceTokens, destinationTokens, mapping);
    }

    /// <summary>The destination for <paramref name="subject"/>, or null when it does not match the source.</summary>
    public string? Apply(string subject)
    {
        if (!SubjectRules.Matches(subject, _source))
        {
            return null;
        }

        var tokens = subject.Split('.');
        var parts = new string[_destinationTokens.Length];
        for (var i = 0; i < parts.Length; i++)
        {
            parts[i] = _mapping[i] switch
            {
                -1 => _destinationTokens[i],
                -2 => string.Join('.', tokens, _sourceTokens.Length - 1, tokens.Length - _sourceTokens.Length + 1),
                var at => tokens[at],
            };
        }

        return string.Join('.', parts);
    }

    // 0: a literal token; N: $N or {{wildcard(N)}}; -1: a placeholder Courier does not know.
    private static int PlaceholderIndex(string token)
    {
        if (token.Length > 1 && token[0] == '$')
        {
            return int.TryParse(token.AsSpan(1), NumberStyles.None, CultureInfo.InvariantCulture, out var n) ? n : 0;
        }

        if (!token.StartsWith("{{", StringComparison.Ordinal) || !token.EndsWith("}}", StringComparison.Ordinal))
        {
            return 0;
        }

        var inner = token.AsSpan(2, token.Length - 4).Trim();
        const string Wildcard = "wildcard(";
        if (!inner.StartsWith(Wildcard, StringComparison.OrdinalIgnoreCase) || !inner.EndsWith(")", StringComparison.Ordinal))
        {
            return -1;
        }

        return int.TryParse(inner[Wildcard.Length..^1].Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out var index) ? index : -1;
    }
}
