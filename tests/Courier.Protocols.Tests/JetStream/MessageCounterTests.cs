using System.Numerics;
using System.Text;
using Courier.Protocols.JetStream;
using Xunit;

namespace Courier.Protocols.Tests.JetStream;

/// <summary>
/// nats-server 2.12's counter values as it reads and writes them: <c>Nats-Incr</c> through Go's
/// <c>big.Int.SetString(s, 10)</c>, a total through json.Unmarshal into <c>{"val": string}</c>, headers through
/// sliceHeader, <c>Nats-Counter-Sources</c> through json.Marshal of a map (keys sorted).
/// </summary>
public sealed class MessageCounterTests
{
    [Theory]
    [InlineData("5", "5")]
    [InlineData("+5", "5")]
    [InlineData("-5", "-5")]
    [InlineData("007", "7")]
    [InlineData("-0", "0")]
    [InlineData("123456789012345678901234567890123456789", "123456789012345678901234567890123456789")]
    public void An_increment_is_a_signed_base_10_integer_of_any_size(string header, string expected)
    {
        Assert.True(MessageCounter.TryReadIncrement(Headers($"Nats-Incr: {header}"), out var increment));
        Assert.Equal(BigInteger.Parse(expected, System.Globalization.CultureInfo.InvariantCulture), increment);
    }

    [Theory]
    [InlineData("one")]
    [InlineData("1.5")]
    [InlineData("1e3")]
    [InlineData("+")]
    [InlineData("--1")]
    [InlineData("1_000")]
    [InlineData("0x10")]
    [InlineData("5 ")]
    public void Anything_else_is_invalid(string header) =>
        Assert.False(MessageCounter.TryReadIncrement(Headers($"Nats-Incr: {header}"), out _));

    [Theory]
    [InlineData("")]
    [InlineData("Nats-Msg-Id: a")]
    [InlineData("nats-incr: 5")]     // sliceHeader is case-sensitive
    [InlineData("X-Nats-Incr: 5")]   // only at the start of a line
    [InlineData("Nats-Incr:")]       // empty reads as none
    public void No_increment_header_is_none(string line)
    {
        Assert.True(MessageCounter.TryReadIncrement(line.Length == 0 ? [] : Headers(line), out var increment));
        Assert.Null(increment);
    }

    [Theory]
    [InlineData("""{"val":"42"}""", "42")]
    [InlineData("""{"val":"-42","other":{"x":[1]}}""", "-42")]
    [InlineData("""{"VAL":"7"}""", "7")] // Go's json matches field names case-insensitively
    [InlineData("""{}""", "0")]
    [InlineData("""{"val":"x"}""", "0")]
    [InlineData("null", "0")]
    public void A_total_is_the_val_string_of_a_json_object(string body, string expected)
    {
        Assert.True(MessageCounter.TryReadValue(Encoding.UTF8.GetBytes(body), out var value));
        Assert.Equal(BigInteger.Parse(expected, System.Globalization.CultureInfo.InvariantCulture), value);
    }

    [Theory]
    [InlineData("")]
    [InlineData("hello")]
    [InlineData("""{"val":42}""")]
    [InlineData("""["42"]""")]
    [InlineData("""{"val":"42"} {}""")]
    public void A_body_that_is_not_such_json_is_a_broken_counter(string body) =>
        Assert.False(MessageCounter.TryReadValue(Encoding.UTF8.GetBytes(body), out _));

    [Fact]
    public void A_total_is_written_as_nats_server_writes_it() =>
        Assert.Equal("""{"val":"-123456789012345678901234567890"}""", Encoding.UTF8.GetString(MessageCounter.FormatValue(BigInteger.Parse("-123456789012345678901234567890", System.Globalization.CultureInfo.InvariantCulture))));

    [Fact]
    public void Counter_sources_read_back_and_are_written_with_sorted_keys()
    {
        var json = """{"b":{"y":"2","x":"1"},"a":{"z":"-3"}}""";
        Assert.True(MessageCounter.TryReadSources(Encoding.UTF8.GetBytes(json), out var sources));
        Assert.Equal("""{"a":{"z":"-3"},"b":{"x":"1","y":"2"}}""", MessageCounter.FormatSources(sources));
        Assert.False(MessageCounter.TryReadSources("""{"a":{"z":3}}"""u8, out _));
        Assert.False(MessageCounter.TryReadSources("nope"u8, out _));
    }

    [Fact]
    public void A_header_value_is_sliced_as_nats_server_does()
    {
        var headers = Headers("Nats-Stream-Source: A 12", "Nats-Counter-Sources:   {\"A\":{}}");
        Assert.Equal("A 12", Encoding.UTF8.GetString(MessageCounter.SliceHeader(headers, "Nats-Stream-Source:"u8)));
        Assert.Equal("{\"A\":{}}", Encoding.UTF8.GetString(MessageCounter.SliceHeader(headers, "Nats-Counter-Sources:"u8)));
        Assert.True(MessageCounter.SliceHeader(headers, "Nats-Incr:"u8).IsEmpty);
    }

    private static byte[] Headers(params string[] lines) =>
        Encoding.UTF8.GetBytes("NATS/1.0\r\n" + string.Concat(lines.Select(l => l + "\r\n")) + "\r\n");
}
