using System.Text;
using Courier.Protocols.Subjects;
using Xunit;

namespace Courier.Protocols.Tests.Subjects;

/// <summary>Subject syntax, matching and containment, as nats-server's sublist.go.</summary>
public sealed class SubjectRulesTests
{
    private static byte[] Utf8(string s) => Encoding.UTF8.GetBytes(s);

    // A subscription subject: tokens separated by '.', none empty, no whitespace; '*' and '>' are
    // wildcards only as whole tokens, and '>' only last.

    [Theory]
    [InlineData("foo")]
    [InlineData("foo.bar")]
    [InlineData("foo.bar.baz.qux")]
    [InlineData("*")]
    [InlineData(">")]
    [InlineData("foo.*")]
    [InlineData("*.bar")]
    [InlineData("foo.>")]
    [InlineData("*.*.>")]
    [InlineData("foo.*.bar.>")]
    [InlineData("foo*")]
    [InlineData("foo.*bar")]
    [InlineData("foo>")]
    [InlineData(">foo")]
    [InlineData("foo.>bar")]
    [InlineData("$SYS.REQ.SERVER.PING")]
    [InlineData("_INBOX.Rx8jw2.1")]
    [InlineData("a-b_c:d/e@f")]
    [InlineData("ünïcödé.subjéct")]
    [InlineData("日本.語")]
    [InlineData("emoji.🚀")]
    public void Valid_subjects_are_accepted(string subject)
    {
        Assert.True(SubjectRules.IsValidSubject(Utf8(subject)));
        Assert.True(SubjectRules.IsValidSubject(subject));
    }

    [Theory]
    [InlineData("")]
    [InlineData(".")]
    [InlineData("..")]
    [InlineData("foo.")]
    [InlineData(".foo")]
    [InlineData("foo..bar")]
    [InlineData("foo.>.bar")]
    [InlineData(">.foo")]
    [InlineData(">.>")]
    [InlineData("foo.>.>")]
    [InlineData("foo.>.")]
    [InlineData("foo bar")]
    [InlineData("foo\tbar")]
    [InlineData(" foo")]
    [InlineData("foo ")]
    [InlineData(" ")]
    [InlineData("\t")]
    [InlineData("foo. .bar")]
    [InlineData("foo.\t.bar")]
    [InlineData("foo\rbar")]
    [InlineData("foo\nbar")]
    [InlineData("foo\fbar")]
    [InlineData("foo.\f")]
    public void Invalid_subjects_are_rejected(string subject)
    {
        Assert.False(SubjectRules.IsValidSubject(Utf8(subject)));
        Assert.False(SubjectRules.IsValidSubject(subject));
    }

    // A literal (publish) subject: a valid subject with no wildcard token.

    [Theory]
    [InlineData("foo")]
    [InlineData("foo.bar")]
    [InlineData("foo*")]
    [InlineData("foo.*bar")]
    [InlineData("foo>")]
    [InlineData("foo.b>r")]
    [InlineData("_INBOX.abc.1")]
    [InlineData("日本.語")]
    public void Literal_subjects_are_accepted(string subject) =>
        Assert.True(SubjectRules.IsValidLiteralSubject(Utf8(subject)));

    [Theory]
    [InlineData("")]
    [InlineData(".")]
    [InlineData("foo.")]
    [InlineData(".foo")]
    [InlineData("foo..bar")]
    [InlineData("*")]
    [InlineData(">")]
    [InlineData("foo.*")]
    [InlineData("foo.>")]
    [InlineData("*.foo")]
    [InlineData("foo.*.bar")]
    [InlineData("foo bar")]
    [InlineData("foo\tbar")]
    [InlineData("foo\fbar")]
    public void Non_literal_or_invalid_subjects_are_not_literal(string subject) =>
        Assert.False(SubjectRules.IsValidLiteralSubject(Utf8(subject)));

    [Theory]
    [InlineData("*", true)]
    [InlineData(">", true)]
    [InlineData("foo.*", true)]
    [InlineData("foo.>", true)]
    [InlineData("*.bar", true)]
    [InlineData("foo.*.bar", true)]
    [InlineData("foo.bar.*", true)]
    [InlineData("", false)]
    [InlineData("foo", false)]
    [InlineData("foo.bar", false)]
    [InlineData("foo*", false)]
    [InlineData("*foo", false)]
    [InlineData("foo.*bar", false)]
    [InlineData("foo.>bar", false)]
    [InlineData("f>.bar", false)]
    [InlineData("foo.b*r.baz", false)]
    public void Has_wildcard_only_for_whole_wildcard_tokens(string subject, bool expected) =>
        Assert.Equal(expected, SubjectRules.HasWildcard(Utf8(subject)));

    // Matches(literal subject, pattern).

    [Theory]
    [InlineData("foo", "foo")]
    [InlineData("foo.bar", "foo.bar")]
    [InlineData("foo.bar", "foo.*")]
    [InlineData("foo.bar", "*.bar")]
    [InlineData("foo.bar", "*.*")]
    [InlineData("foo", "*")]
    [InlineData("foo", ">")]
    [InlineData("foo.bar.baz", ">")]
    [InlineData("foo.bar", "foo.>")]
    [InlineData("foo.bar.baz", "foo.>")]
    [InlineData("foo.bar.baz", "foo.*.>")]
    [InlineData("foo.bar.baz", "*.bar.*")]
    [InlineData("foo*", "foo*")]
    [InlineData("foo*.bar", "*.bar")]
    public void A_pattern_matches_the_subjects_it_covers(string subject, string pattern) =>
        Assert.True(SubjectRules.Matches(subject, pattern));

    [Theory]
    [InlineData("foo", "bar")]
    [InlineData("foo", "foo.bar")]
    [InlineData("foo.bar", "foo")]
    [InlineData("foo", "foo.*")]
    [InlineData("foo", "foo.>")]
    [InlineData("foo.bar", "foo.*.>")]
    [InlineData("foo.bar.baz", "foo.*")]
    [InlineData("foo.bar", "*")]
    [InlineData("foo.bar", "bar.*")]
    [InlineData("foo.bar", "*.baz")]
    [InlineData("foox", "foo*")]
    [InlineData("foo.bar", "foo.b*")]
    [InlineData("foobar", "foo")]
    [InlineData("foo", "foobar")]
    [InlineData("bar.foo", "foo.>")]
    public void A_pattern_does_not_match_other_subjects(string subject, string pattern) =>
        Assert.False(SubjectRules.Matches(subject, pattern));

    // IsSubsetOf(inner, outer): every subject inner matches, outer matches too.

    [Theory]
    [InlineData("foo.bar", "foo.*", true)]
    [InlineData("foo.bar", "foo.>", true)]
    [InlineData("foo.bar", ">", true)]
    [InlineData("foo.bar", "foo.bar", true)]
    [InlineData("foo.*", "foo.>", true)]
    [InlineData("foo.*", "foo.*", true)]
    [InlineData("foo.*", "*.*", true)]
    [InlineData("foo.*", ">", true)]
    [InlineData("foo.>", "foo.>", true)]
    [InlineData("foo.>", ">", true)]
    [InlineData("foo.bar.>", "foo.>", true)]
    [InlineData("foo.bar.>", "foo.*.>", true)]
    [InlineData("*", ">", true)]
    [InlineData("*", "*", true)]
    [InlineData(">", ">", true)]
    [InlineData("foo.>", "foo.*", false)]
    [InlineData("foo.*", "foo.bar", false)]
    [InlineData("*.*", "foo.*", false)]
    [InlineData("*.foo", "foo.*", false)]
    [InlineData("foo", "foo.>", false)]
    [InlineData("foo", "foo.*", false)]
    [InlineData(">", "foo.>", false)]
    [InlineData(">", "*", false)]
    [InlineData("foo.*.>", "foo.bar.>", false)]
    [InlineData("foo.bar.baz", "foo.*", false)]
    [InlineData("foo.bar", "foo.baz", false)]
    [InlineData("*", "foo", false)]
    [InlineData("foo.>", "foo.*.>", false)]
    public void Subset_holds_only_when_the_outer_pattern_covers_every_subject_of_the_inner(string inner, string outer, bool expected) =>
        Assert.Equal(expected, SubjectRules.IsSubsetOf(inner, outer));

    // Collide(a, b): some subject matches both (either order gives the same answer).

    [Theory]
    [InlineData("foo.bar", "foo.bar", true)]
    [InlineData("foo.*", "foo.bar", true)]
    [InlineData("foo.*.bar", "foo.baz.*", true)]
    [InlineData("foo.>", "foo.bar.baz", true)]
    [InlineData("*.bar", "foo.*", true)]
    [InlineData(">", "foo", true)]
    [InlineData("foo.*", "foo.>", true)]
    [InlineData("foo.bar", "foo.baz", false)]
    [InlineData("foo", "foo.>", false)]
    [InlineData("foo.*", "foo", false)]
    [InlineData("foo.*", "foo.bar.baz", false)]
    [InlineData("foo.*.bar", "foo.*.baz", false)]
    [InlineData("bar.>", "foo.>", false)]
    public void Patterns_collide_when_some_subject_matches_both(string a, string b, bool expected)
    {
        Assert.Equal(expected, SubjectRules.Collide(a, b));
        Assert.Equal(expected, SubjectRules.Collide(b, a));
    }
}
