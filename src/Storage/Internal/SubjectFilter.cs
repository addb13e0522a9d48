using System.Text;
using Courier.Protocols.Subjects;

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
        return new SubjectFilter(filter, utf8, isAll: false, isLiteral: !SubjectRules.HasWildcard(utf8));
    }

    /// <summary>Whether the literal <paramref name="subject"/> matches this filter.</summary>
    public bool Matches(ReadOnlySpan<byte> subject)
    {
        if (IsAll)
        {
            return true;
        }

        return IsLiteral ? subject.SequenceEqual(Utf8) : SubjectRules.Matches(subject, Utf8);
    }

    /// <summary>True for a non-empty subject with no <c>*</c> or <c>&gt;</c> token: a filter that is one subject.</summary>
    public static bool IsLiteralSubject(ReadOnlySpan<char> subject) => !subject.IsEmpty && !SubjectRules.HasWildcard(subject);
}
