"""Small components shared by the kernel tests."""

from archmodel.kernel import Component, Counter, In, Out, Param, at_least, model


@model(catalogue=False)
class Producer(Component):
    """Sends the integers 0..count-1, one per cycle when a credit allows; logs send times."""

    count = Param(int, 5, "messages to send", check=at_least(0))
    out = Out("integers")

    def setup(self):
        self.next_value = 0
        self.make = int  # message constructor, so a test can send sized messages
        self.sent_at: list[int] = []

    def tick(self):
        if self.next_value >= self.count:
            self.sleep()
        elif self.out.try_send(self.make(self.next_value)):
            self.sent_at.append(self.now)
            self.next_value += 1


@model(catalogue=False)
class Consumer(Component):
    """Takes every message as soon as it arrives; logs (time, message)."""

    inp = In("integers")
    received = Counter("messages", "messages taken")

    def setup(self):
        self.log: list[tuple[int, int]] = []

    def tick(self):
        if self.inp.valid:
            self.log.append((self.now, self.inp.recv()))
            self.received.add()
        else:
            self.sleep()


@model(catalogue=False)
class Napper(Component):
    """Sleeps for ``cycles`` cycles, then counts one wake-up and sleeps for good."""

    cycles = Param(int, 1, "cycles to sleep", check=at_least(1))

    def setup(self):
        self.woke_at: list[int] = []

    def tick(self):
        if not self.woke_at and self.cycle == 0:
            self.woke_at.append(self.now)
            self.sleep_for(self.cycles)
        else:
            self.woke_at.append(self.now)
            self.sleep()
