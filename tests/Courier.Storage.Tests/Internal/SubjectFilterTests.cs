using System.Text;
using Courier.Storage.Internal;
using Xunit;

namespace Courier.Storage.Tests.Internal;

/// <summary>Filter subjects as stores match them (NATS wildcard rules).</summary>
public sealed class SubjectFilterTests
{
    [Theory]
    [InlineData(null, "a.b", true)]
    [InlineData("", "a.b", true)]
    [InlineData(">", "a", true)]
    [InlineData("a.b", "a.b", true)]
    [InlineData("a.b", "a.bc", false)]
    [InlineData("a.*", "a.b", true)]
    [InlineData("a.*", "a.b.c", false)]
    [InlineData("a.>", "a.b.c", true)]
    [InlineData("a.>", "a", false)]
    [InlineData("*.b.*", "x.b.y", true)]
    [InlineData("*.b.*", "x.c.y", false)]
    [InlineData("a*", "a*", true)]    // not a wildcard token: literal
    [InlineData("a*", "ab", false)]
    [InlineData("*", "a.b", false)]
    public void Matches_as_a_nats_subscription(string? filter, string subject, bool expected)
    {
        var f = SubjectFilter.Parse(filter);
        Assert.Equal(expected, f.Matches(Encoding.UTF8.GetBytes(subject)));
    }

    [Theory]
    [InlineData("a.b", true)]
    [InlineData("a*.b", true)]
    [InlineData("a.*", false)]
    [InlineData("a.>", false)]
    public void Knows_literals_from_patterns(string filter, bool literal) =>
        Assert.Equal(literal, SubjectFilter.Parse(filter).IsLiteral);

    [Theory]
    [InlineData("a.b", true)]
    [InlineData("a*.b", true)]
    [InlineData("$KV.bucket.key", true)]
    [InlineData("*", false)]
    [InlineData(">", false)]
    [InlineData("a.*", false)]
    [InlineData("a.>", false)]
    [InlineData("*.b", false)]
    [InlineData("", false)]
    public void Tells_a_literal_subject_from_its_text_alone(string subject, bool literal)
    {
        Assert.Equal(literal, SubjectFilter.IsLiteralSubject(subject));
        Assert.Equal(literal, subject.Length > 0 && subject != ">" && SubjectFilter.Parse(subject).IsLiteral);
    }
}
