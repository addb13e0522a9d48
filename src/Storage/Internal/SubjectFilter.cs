using System.Text;

namespace Courier.Storage.Internal;

/// <summary>
/// A filter subject prepared for matching stored subjects (UTF-8 bytes): every subject (null, empty,
/// <c>&gt;</c>), a literal, or a pattern with <c>*</c> (one token) and <c>&gt;</c> (the rest) wildcards.
/// </summary>
internal sealed class SubjectFilter
{
    /// <summary>Matches every subject.</summary>
    public static readonly SubjectFilter All = new(null, [], isAll: true, isLiteral: false);

    private SubjectFilter(string? text, byte[] utf8, bool isAll, bool isLiteral)
    {
        Text = text;
        Utf8 = utf8;
        IsAll = isAll;
        IsLiteral = isLiteral;
    }

    /// <summary>The filter as given.</summary>
    public string? Text { get; }

    /// <summary>The filter's UTF-8 bytes.</summary>
    public byte[] Utf8 { get; }

    /// <summary>True for null, empty or <c>&gt;</c>.</summary>
    public bool IsAll { get; }

    /// <summary>True when there is no wildcard token.</summary>
    public bool IsLiteral { get; }

    /// <summary>Prepares <paramref name="filter"/>.</summary>
    public static SubjectFilter Parse(string? filter)
    {
        if (string.IsNullOrEmpty(filter) || filter == ">")
        {
            return All;
        }

        var utf8 = Encoding.UTF8.GetBytes(filter);
        return new SubjectFilter(filter, utf8, isAll: false, isLiteral: !HasWildcard(utf8));
    }

    /// <summary>Whether the literal <paramref name="subject"/> matches this filter.</summary>
    public bool Matches(ReadOnlySpan<byte> subject)
    {
        if (IsAll)
        {
            return true;
        }

        return IsLiteral ? subject.SequenceEqual(Utf8) : Match(subject, Utf8);
    }

    /// <summary>Token-wise match of a literal subject against a pattern, as NATS subscriptions.</summary>
    public static bool Match(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> pattern)
    {
        while (true)
        {
            var pDot = pattern.IndexOf((byte)'.');
            var pToken = pDot < 0 ? pattern : pattern[..pDot];
            if (pToken.Length == 1 && pToken[0] == (byte)'>')
            {
                return !subject.IsEmpty;
            }

            if (subject.IsEmpty)
            {
                return false;
            }

            var sDot = subject.IndexOf((byte)'.');
            var sToken = sDot < 0 ? subject : subject[..sDot];
            if (!(pToken.Length == 1 && pToken[0] == (byte)'*') && !pToken.SequenceEqual(sToken))
            {
                return false;
            }

            if (pDot < 0 || sDot < 0)
            {
                return pDot < 0 && sDot < 0;
            }

            pattern = pattern[(pDot + 1)..];
            subject = subject[(sDot + 1)..];
        }
    }

    /// <summary>True for a non-empty subject with no <c>*</c> or <c>&gt;</c> token: a filter that is one subject.</summary>
    public static bool IsLiteralSubject(ReadOnlySpan<char> subject)
    {
        if (subject.IsEmpty)
        {
            return false;
        }

        var tokenStart = 0;
        for (var i = 0; i <= subject.Length; i++)
        {
            if (i == subject.Length || subject[i] == '.')
            {
                if (i - tokenStart == 1 && subject[tokenStart] is '*' or '>')
                {
                    return false;
                }

                tokenStart = i + 1;
            }
        }

        return true;
    }

    private static bool HasWildcard(ReadOnlySpan<byte> subject)
    {
        var tokenStart = 0;
        for (var i = 0; i <= subject.Length; i++)
        {
            if (i == subject.Length || subject[i] == (byte)'.')
            {
                if (i - tokenStart == 1 && (subject[tokenStart] == (byte)'*' || subject[tokenStart] == (byte)'>'))
                {
                    return true;
                }

                tokenStart = i + 1;
            }
        }

        return false;
    }
}
