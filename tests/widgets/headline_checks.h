// SPDX-License-Identifier: GPL-3.0-or-later
// What "nothing overprints" means for the headline strip, checked on the laid-out widgets:
// every card inside the strip and apart from the others, every shown label inside its card,
// apart from the card's other labels and at least as tall as one line of its text (the
// values also as wide as their text: a value is never cut).
#pragma once
#include "widgets/headline.h"

#include <QFrame>
#include <QLabel>
#include <QStringList>

namespace paralens::testing {

inline QString rectText(const QRect& r)
{
    return QStringLiteral("%1,%2 %3x%4").arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height());
}

/// "" when the strip is set cleanly, else what overprints.
inline QString headlineOverprint(const Headline& h)
{
    QStringList problems;
    QList<QRect> cards;
    for (int f = 0; f < Headline::FigureCount; ++f) {
        const auto fig = static_cast<Headline::Figure>(f);
        const QFrame* card = h.card(fig);
        const QRect inStrip(card->mapTo(&h, QPoint(0, 0)), card->size());
        const QString name = Headline::figureName(fig);
        if (!h.rect().contains(inStrip))
            problems << QStringLiteral("%1: card %2 outside the strip %3")
                            .arg(name, rectText(inStrip), rectText(h.rect()));
        for (const QRect& other : cards)
            if (other.intersects(inStrip))
                problems << QStringLiteral("%1: card %2 overlaps %3")
                                .arg(name, rectText(inStrip), rectText(other));
        cards << inStrip;
        QList<QPair<QString, QRect>> labels;
        for (const QLabel* l : card->findChildren<QLabel*>()) {
            if (!l->isVisibleTo(card) || l->text().isEmpty())
                continue;
            const QRect r = l->geometry();
            const QString what =
                QStringLiteral("%1: \"%2\" at %3").arg(name, l->text(), rectText(r));
            if (!card->contentsRect().contains(r))
                problems << what + QStringLiteral(" outside its card ") +
                                rectText(card->contentsRect());
            if (r.height() < l->sizeHint().height())
                problems << what + QStringLiteral(" lower than a line (%1 px)")
                                       .arg(l->sizeHint().height());
            if (l == h.valueLabel(fig) && r.width() < l->sizeHint().width())
                problems << what + QStringLiteral(" narrower than its value (%1 px)")
                                       .arg(l->sizeHint().width());
            for (const auto& [otherText, other] : labels)
                if (other.intersects(r))
                    problems << what + QStringLiteral(" overlaps \"%1\" at %2")
                                           .arg(otherText, rectText(other));
            labels.append({l->text(), r});
        }
    }
    return problems.join(QLatin1Char('\n'));
}

} // namespace paralens::testing
