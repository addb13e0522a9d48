namespace Courier.Protocols.Subjects;

/// <summary>
/// Subject syntax as nats-server: tokens separated by '.', no empty tokens, no whitespace;
/// <c>*</c> matches one token and <c>&gt;</c> one or more trailing tokens, each only as a whole token.
/// </summary>
public static class SubjectRules
{
    /// <summary>The token separator.</summary>
    public const byte Separator = (byte)'.';

    /// <summary>A subscription subject: wildcards allowed, <c>&gt;</c> only as the last token.</summary>
    public static bool IsValidSubject(ReadOnlySpan<byte> subject) => Validate(subject, allowWildcards: true);

    /// <summary>A subject without wildcards (what pedantic mode requires of a publish).</summary>
    public static bool IsValidLiteralSubject(ReadOnlySpan<byte> subject) => Validate(subject, allowWildcards: false);

    /// <inheritdoc cref="IsValidSubject(ReadOnlySpan{byte})"/>
    public static bool IsValidSubject(string subject) => IsValidSubject(System.Text.Encoding.UTF8.GetBytes(subject));

    /// <summary>True when the subject has a wildcard token.</summary>
    public static bool HasWildcard(ReadOnlySpan<byte> subject) => HasWildcard(subject, Separator, (byte)'*', (byte)'>');

    /// <inheritdoc cref="HasWildcard(ReadOnlySpan{byte})"/>
    public static bool HasWildcard(ReadOnlySpan<char> subject) => HasWildcard(subject, '.', '*', '>');

    private static bool HasWildcard<T>(ReadOnlySpan<T> subject, T separator, T star, T full)
        where T : IEquatable<T>
    {
        var tokenStart = 0;
        for (var i = 0; i <= subject.Length; i++)
        {
            if (i == subject.Length || subject[i].Equals(separator))
            {
                if (i - tokenStart == 1 && (subject[tokenStart].Equals(star) || subject[tokenStart].Equals(full)))
                {
                    return true;
                }

                tokenStart = i + 1;
            }
        }

        return false;
    }

    private static bool Validate(ReadOnlySpan<byte> subject, bool allowWildcards)
    {
        if (subject.IsEmpty)
        {
            return false;
        }

        var tokenStart = 0;
        var sawFullWildcard = false;
        for (var i = 0; i <= subject.Length; i++)
        {
            if (i < subject.Length)
            {
                var b = subject[i];
                if (b == (byte)' ' || b == (byte)'\t' || b == (byte)'\r' || b == (byte)'\n' || b == (byte)'\f' || b == 0)
                {
                    return false;
                }

                if (b != Separator)
                {
                    continue;
                }
            }

            var length = i - tokenStart;
            if (length == 0 || sawFullWildcard)
            {
                return false;
            }

            if (length == 1)
            {
                var t = subject[tokenStart];
                if (t == (byte)'*' || t == (byte)'>')
                {
                    if (!allowWildcards)
                    {
                        return false;
                    }

                    sawFullWildcard = t == (byte)'>';
                }
            }

            tokenStart = i + 1;
        }

        return true;
    }

    /// <summary>
    /// Whether a literal subject is matched by a pattern that may have wildcards.
    /// </summary>
    public static bool Matches(ReadOnlySpan<char> subject, ReadOnlySpan<char> pattern) => Matches(subject, pattern, '.', '*', '>');

    /// <inheritdoc cref="Matches(ReadOnlySpan{char}, ReadOnlySpan{char})"/>
    public static bool Matches(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> pattern) => Matches(subject, pattern, Separator, (byte)'*', (byte)'>');

    private static bool Matches<T>(ReadOnlySpan<T> subject, ReadOnlySpan<T> pattern, T separator, T star, T full)
        where T : IEquatable<T>
    {
        while (true)
        {
            var pDot = pattern.IndexOf(separator);
            var pToken = pDot < 0 ? pattern : pattern[..pDot];
            if (pToken.Length == 1 && pToken[0].Equals(full))
            {
                return !subject.IsEmpty;
            }

            if (subject.IsEmpty)
            {
                return false;
            }

            var sDot = subject.IndexOf(separator);
            var sToken = sDot < 0 ? subject : subject[..sDot];
            if (!(pToken.Length == 1 && pToken[0].Equals(star)) && !pToken.SequenceEqual(sToken))
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

    /// <summary>
    /// Whether pattern <paramref name="inner"/> matches only subjects that <paramref name="outer"/>
    /// also matches (every subject of inner is a subject of outer). Used for permission checks on
    /// wildcard subscriptions.
    /// </summary>
    public static bool IsSubsetOf(ReadOnlySpan<char> inner, ReadOnlySpan<char> outer)
    {
        while (true)
        {
            var oDot = outer.IndexOf('.');
            var oToken = oDot < 0 ? outer : outer[..oDot];
            if (oToken.Length == 1 && oToken[0] == '>')
            {
                return !inner.IsEmpty;
            }

            if (inner.IsEmpty)
            {
                return false;
            }

            var iDot = inner.IndexOf('.');
            var iToken = iDot < 0 ? inner : inner[..iDot];
            if (iToken.Length == 1 && iToken[0] == '>')
            {
                return false;
            }

            var outerStar = oToken.Length == 1 && oToken[0] == '*';
            if (!outerStar && !oToken.SequenceEqual(iToken))
            {
                return false;
            }

            if (oDot < 0 || iDot < 0)
            {
                return oDot < 0 && iDot < 0;
            }

            outer = outer[(oDot + 1)..];
            inner = inner[(iDot + 1)..];
        }
    }

    /// <summary>
    /// Whether two patterns (either may have wildcards) match at least one subject in common, as
    /// nats-server's SubjectsCollide (work-queue consumers' filters must not collide).
    /// </summary>
    public static bool Collide(ReadOnlySpan<char> a, ReadOnlySpan<char> b)
    {
        while (true)
        {
            if (a.IsEmpty || b.IsEmpty)
            {
                return a.IsEmpty && b.IsEmpty;
            }

            var aDot = a.IndexOf('.');
            var bDot = b.IndexOf('.');
            var aToken = aDot < 0 ? a : a[..aDot];
            var bToken = bDot < 0 ? b : b[..bDot];
            if ((aToken.Length == 1 && aToken[0] == '>') || (bToken.Length == 1 && bToken[0] == '>'))
            {
                return true;
            }

            var aStar = aToken.Length == 1 && aToken[0] == '*';
            var bStar = bToken.Length == 1 && bToken[0] == '*';
            if (!aStar && !bStar && !aToken.SequenceEqual(bToken))
            {
                return false;
            }

            a = aDot < 0 ? [] : a[(aDot + 1)..];
            b = bDot < 0 ? [] : b[(bDot + 1)..];
        }
    }
}
