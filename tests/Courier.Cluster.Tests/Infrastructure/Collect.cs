using System.Collections.Concurrent;
using NATS.Client.Core;

namespace Courier.Cluster.Tests.Infrastructure;

/// <summary>Collects what a NATS.Net subscription receives, in the background, for assertions.</summary>
public sealed class Collect : IAsyncDisposable
{
    private readonly INatsSub<string> _subscription;
    private readonly Task _reader;

    private Collect(INatsSub<string> subscription)
    {
        _subscription = subscription;
        _reader = Task.Run(async () =>
        {
            await foreach (var message in subscription.Msgs.ReadAllAsync())
            {
                Messages.Enqueue(message);
            }
        });
    }

    /// <summary>Everything received so far, in arrival order.</summary>
    public ConcurrentQueue<NatsMsg<string>> Messages { get; } = new();

    public static async Task<Collect> SubscribeAsync(NatsConnection connection, string subject, string? queueGroup = null)
    {
        var subscription = await connection.SubscribeCoreAsync<string>(subject, queueGroup);
        await connection.PingAsync();
        return new Collect(subscription);
    }

    public async ValueTask DisposeAsync()
    {
        await _subscription.UnsubscribeAsync();
        await _subscription.DisposeAsync();
        await _reader;
    }
}
