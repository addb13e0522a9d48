using Courier.Actors.Connections;

namespace Courier.Actors.Mqtt;

/// <summary>
/// What lets a QoS 1/2 PUBLISH be acknowledged only once the persistent sessions that keep it have
/// journaled it (a PUBACK is a promise: <c>kill -9</c> right after it must not lose the message for an
/// offline session). Every QoS 1/2 message a session's capture subscription takes gets a number here
/// (as the capture subscription takes it, on the publisher's thread) and stays unresolved until its session has
/// journaled it or dropped it.
/// </summary>
/// <remarks>
/// A publisher whose read batch reached a capture subscription (<see cref="Connections.ClientConnection"/>
/// sees the capture connection among its targets) calls <see cref="WaitForCapturedAsync"/> once per read
/// batch: a flush of the capture client proves everything routed before was delivered there, so
/// numbered; then it waits until no number below the capture client's next one is unresolved. One lock,
/// taken per captured QoS 1/2 message and per barrier, never across I/O; QoS 0 never comes here.
/// </remarks>
internal sealed class MqttCaptureLedger
{
    private readonly Lock _lock = new();
    private readonly SortedSet<long> _unresolved = [];
    private readonly List<(long UpTo, TaskCompletionSource Done)> _waiters = [];
    private readonly List<InProcessClient> _clients = []; // one per account with persistent sessions
    private long _next = 1;

    /// <summary>An account's capture client, once made (<see cref="MqttSessions"/>): barriers go through each.</summary>
    public void Attach(InProcessClient client)
    {
        lock (_lock)
        {
            _clients.Add(client);
        }
    }

    /// <summary>A capture subscription took a QoS 1/2 message: its number, unresolved until <see cref="Resolve"/>.</summary>
    public long Capture()
    {
        lock (_lock)
        {
            var number = _next++;
            _unresolved.Add(number);
            return number;
        }
    }

    /// <summary>Their session journaled (or dropped) the messages <paramref name="numbers"/>.</summary>
    public void Resolve(IReadOnlyList<long> numbers)
    {
        List<TaskCompletionSource>? done = null;
        lock (_lock)
        {
            foreach (var number in numbers)
            {
                _unresolved.Remove(number);
            }

            var floor = _unresolved.Count == 0 ? long.MaxValue : _unresolved.Min;
            for (var i = _waiters.Count - 1; i >= 0; i--)
            {
                if (_waiters[i].UpTo <= floor)
                {
                    (done ??= []).Add(_waiters[i].Done);
                    _waiters.RemoveAt(i);
                }
            }
        }

        if (done is not null)
        {
            foreach (var waiter in done)
            {
                waiter.TrySetResult();
            }
        }
    }

    /// <summary>
    /// Completes once every QoS 1/2 message routed to a capture subscription before this call is
    /// journaled by its session (or dropped by it).
    /// </summary>
    public async Task WaitForCapturedAsync()
    {
        InProcessClient[] clients;
        lock (_lock)
        {
            clients = [.. _clients];
        }

        if (clients.Length == 0)
        {
            return; // no persistent session has ever captured anything
        }

        foreach (var client in clients)
        {
            await client.FlushAsync().ConfigureAwait(false); // what was routed before is delivered, so numbered
        }

        Task wait;
        lock (_lock)
        {
            if (_unresolved.Count == 0)
            {
                return; // every number so far (all below _next) is resolved
            }

            var waiter = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _waiters.Add((_next, waiter));
            wait = waiter.Task;
        }

        await wait.ConfigureAwait(false);
    }
}
