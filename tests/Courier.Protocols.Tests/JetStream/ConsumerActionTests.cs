using System.Text.Json;
using Courier.Protocols.JetStream;
using Xunit;

namespace Courier.Protocols.Tests.JetStream;

/// <summary>A consumer create's <c>action</c> read and written as nats-server 2.10's ConsumerAction (consumer.go).</summary>
public sealed class ConsumerActionTests
{
    private static ConsumerAction Read(string action) =>
        JsonSerializer.Deserialize($$"""{"stream_name":"S","config":{}{{action}}}""", ConsumerJsonContext.Default.CreateConsumerRequest)!.Action;

    [Theory]
    [InlineData("", ConsumerAction.CreateOrUpdate)]
    [InlineData(",\"action\":\"\"", ConsumerAction.CreateOrUpdate)]
    [InlineData(",\"action\":\"create\"", ConsumerAction.Create)]
    [InlineData(",\"action\":\"update\"", ConsumerAction.Update)]
    public void Absent_empty_create_and_update_are_read(string action, ConsumerAction expected) => Assert.Equal(expected, Read(action));

    [Theory]
    [InlineData("\"upsert\"")]
    [InlineData("\"Create\"")]
    [InlineData("\"UPDATE\"")]
    [InlineData("\" create\"")]
    [InlineData("null")]
    [InlineData("1")]
    [InlineData("true")]
    [InlineData("{}")]
    public void Anything_else_is_invalid_json(string action) => Assert.Throws<JsonException>(() => Read($",\"action\":{action}"));

    [Theory]
    [InlineData(ConsumerAction.Create, ",\"action\":\"create\"")]
    [InlineData(ConsumerAction.Update, ",\"action\":\"update\"")]
    [InlineData(ConsumerAction.CreateOrUpdate, "")]
    public void Written_with_its_wire_name_and_left_out_when_create_or_update(ConsumerAction action, string expected) =>
        Assert.Equal(
            $$"""{"stream_name":"S","config":null{{expected}}}""",
            JsonSerializer.Serialize(new CreateConsumerRequest { StreamName = "S", Action = action }, ConsumerJsonContext.Default.CreateConsumerRequest));
}
