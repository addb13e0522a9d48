using System.Text;
using Courier.Protocols.Nats;
using Xunit;

namespace Courier.Protocols.Tests.Nats;

/// <summary>
/// Header lookups: <see cref="NatsHeaders.Get"/> scans bytes and decodes only the value, and must answer as the
/// text lookup it replaced (the whole block decoded, split on CRLF, names trimmed and compared ignoring case);
/// <see cref="NatsHeaders.InertForJetStream"/> says whether a block names any <c>Nats-</c> header that lookup finds.
/// </summary>
public sealed class NatsHeadersTests
{
    private static readonly string[] Names = ["Nats-Msg-Id", "nats-msg-id", "NATS-TTL", "Nats-TTL", "X-Trace", "Nats-Expected-Stream", "KV-Operation", "Nats", "Nats-", "nats_ttl"];
    private static readonly string[] Pieces = ["NATS/1.0", "NATS/1.0 503", "Nats-Msg-Id", "nats-msg-id", " Nats-TTL ", "\tNATS-TTL", "X-Trace", "Nats", "Nats-", "KV-Operation", "\u00a0Nats-TTL", "Ünïcode", ":", ": ", "1h", " abc ", "\u00a0v\u00a0", "\x1cNats-TTL", "", " "];

    [Theory]
    [InlineData("NATS/1.0\r\nNats-Msg-Id: abc\r\n\r\n", "Nats-Msg-Id", "abc")]
    [InlineData("NATS/1.0\r\nnats-msg-id:   abc  \r\n\r\n", "Nats-Msg-Id", "abc")]
    [InlineData("NATS/1.0\r\n  Nats-TTL : 1h\r\nNats-TTL: 2h\r\n\r\n", "nats-ttl", "1h")]
    [InlineData("NATS/1.0\r\nX-Other: 1\r\n\r\n", "Nats-TTL", null)]
    [InlineData("NATS/1.0\r\n:no-name\r\n\r\n", "", null)]
    [InlineData("NATS/1.0\r\nA: b:c\r\n\r\n", "A", "b:c")]
    public void Get_finds_the_first_value_by_its_trimmed_name_in_any_case(string block, string name, string? expected) =>
        Assert.Equal(expected, NatsHeaders.Get(Encoding.UTF8.GetBytes(block), name));

    [Theory]
    [InlineData("NATS/1.0\r\nX-Trace: 1\r\nContent-Type: text/plain\r\n\r\n", true)]
    [InlineData("NATS/1.0\r\n\r\n", true)]
    [InlineData("NATS/1.0 503\r\n\r\n", true)]
    [InlineData("NATS/1.0\r\nNats-Msg-Id: 1\r\n\r\n", false)]
    [InlineData("NATS/1.0\r\n nats-ttl: 1h\r\n\r\n", false)]
    [InlineData("NATS/1.0\r\nNATS-EXPECTED-STREAM: S\r\n\r\n", false)]
    [InlineData("NATS/1.0\r\nNatsy: 1\r\n\r\n", true)]
    [InlineData("NATS/1.0\r\n\u00a0Nats-TTL: 1h\r\n\r\n", false)] // a name outside ASCII: the careful path decides
    public void A_block_is_inert_when_it_names_no_nats_header(string block, bool inert) =>
        Assert.Equal(inert, NatsHeaders.InertForJetStream(Encoding.UTF8.GetBytes(block)));

    /// <summary>Random blocks from pieces that stress the edges (whitespace, case, colons, non-ASCII); seeded, so a failure replays.</summary>
    [Fact]
    public void Get_and_inert_agree_with_the_text_lookup_on_random_blocks()
    {
        var random = new Random(20261129);
        for (var round = 0; round < 20_000; round++)
        {
            var lines = new List<string>();
            for (var n = random.Next(1, 6); n > 0; n--)
            {
                var line = new StringBuilder();
                for (var k = random.Next(1, 5); k > 0; k--)
                {
                    line.Append(Pieces[random.Next(Pieces.Length)]);
                }

                lines.Add(line.ToString());
            }

            var text = string.Join("\r\n", lines) + (random.Next(2) == 0 ? "\r\n\r\n" : "");
            var block = Encoding.UTF8.GetBytes(text);
            foreach (var name in Names)
            {
                Assert.True(Reference(text, name) == NatsHeaders.Get(block, name), $"round {round}: Get({name}) of {Escape(text)}: [{Reference(text, name)}] vs [{NatsHeaders.Get(block, name)}]");
            }

            var anyNats = ReferenceNames(text).Any(n => n.StartsWith("Nats-", StringComparison.OrdinalIgnoreCase));
            if (anyNats)
            {
                Assert.False(NatsHeaders.InertForJetStream(block), $"round {round}: inert with a Nats- name: {Escape(text)}");
            }
            else if (text.Split("\r\n").All(l => l.IndexOf(':', StringComparison.Ordinal) is var colon && (colon <= 0 || Ascii.IsValid(l.AsSpan(0, colon)))))
            {
                Assert.True(NatsHeaders.InertForJetStream(block), $"round {round}: not inert without a Nats- name: {Escape(text)}");
            }
        }
    }

    // The lookup NatsHeaders.Get replaced: the whole block as text.
    private static string? Reference(string text, string name)
    {
        foreach (var line in text.Split("\r\n"))
        {
            var colon = line.IndexOf(':', StringComparison.Ordinal);
            if (colon > 0 && line.AsSpan(0, colon).Trim().Equals(name, StringComparison.OrdinalIgnoreCase))
            {
                return line[(colon + 1)..].Trim();
            }
        }

        return null;
    }

    private static IEnumerable<string> ReferenceNames(string text) =>
        text.Split("\r\n").Select(l => (Line: l, Colon: l.IndexOf(':', StringComparison.Ordinal))).Where(l => l.Colon > 0).Select(l => l.Line[..l.Colon].Trim());

    private static string Escape(string text) => text.Replace("\r", "\\r", StringComparison.Ordinal).Replace("\n", "\\n", StringComparison.Ordinal);
}
