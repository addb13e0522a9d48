using System.Text.Json;
using Courier.Protocols.JetStream;
using Xunit;

namespace Courier.Protocols.Tests.JetStream;

/// <summary>A consumer's <c>priority_policy</c> read and written as nats-server 2.12's PriorityPolicy (consumer.go), through the strict create.</summary>
public sealed class PriorityPolicyTests
{
    private static CreateConsumerRequest? Read(string policy, out ApiError? error) =>
        StrictRequests.ReadCreateConsumer(System.Text.Encoding.UTF8.GetBytes($$$"""{"stream_name":"S","config":{"priority_policy":{{{policy}}}}}"""), out error);

    [Theory]
    [InlineData("\"none\"", PriorityPolicy.None)]
    [InlineData("\"overflow\"", PriorityPolicy.Overflow)]
    [InlineData("\"pinned_client\"", PriorityPolicy.PinnedClient)]
    [InlineData("\"prioritized\"", PriorityPolicy.Prioritized)]
    public void Nats_servers_names_are_read(string policy, PriorityPolicy expected)
    {
        Assert.Equal(expected, Read(policy, out var error)!.Config!.PriorityPolicy);
        Assert.Null(error);
    }

    [Theory]
    [InlineData("\"fastest\"", "invalid JSON: unknown priority policy: \"fastest\"")]
    [InlineData("\"Overflow\"", "invalid JSON: unknown priority policy: \"Overflow\"")]
    [InlineData("null", "invalid JSON: unknown priority policy: null")]
    [InlineData("2", "invalid JSON: unknown priority policy: 2")]
    public void Anything_else_is_refused_in_nats_servers_words(string policy, string description)
    {
        Assert.Null(Read(policy, out var error));
        Assert.Equal((400, 10025, description), (error!.Code, error.ErrCode, error.Description));
    }

    [Theory]
    [InlineData(PriorityPolicy.Overflow, "\"priority_policy\":\"overflow\"")]
    [InlineData(PriorityPolicy.PinnedClient, "\"priority_policy\":\"pinned_client\"")]
    [InlineData(PriorityPolicy.Prioritized, "\"priority_policy\":\"prioritized\"")]
    public void Written_with_its_wire_name(PriorityPolicy policy, string expected) =>
        Assert.Contains(expected, JsonSerializer.Serialize(new ConsumerConfig { PriorityPolicy = policy }, ConsumerJsonContext.Default.ConsumerConfig), StringComparison.Ordinal);

    [Fact]
    public void None_is_left_out_as_nats_servers_omitempty_leaves_it() =>
        Assert.DoesNotContain("priority", JsonSerializer.Serialize(new ConsumerConfig(), ConsumerJsonContext.Default.ConsumerConfig), StringComparison.Ordinal);
}
